import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { tokenHash } from '../../src/infra/crypto/secret-box.service';
import { freePort } from '../../src/infra/database/embedded-postgres';
import type { BenchContext, CustomResult, Scenario } from '../bench.types';
import { baseline, promptBody, runLoad, startChild, waitUntil } from './ingest.bench';

const DEVICES = 400;
const RULES = 1000;
/** The window after the rules change that the row measures, whatever BENCH_DURATION says. */
const COLD_SECONDS = 10;
/** How many rule writes are in flight at once while the rules are created through the API. */
const WRITERS = 8;

/** A rule as an administrator writes them: vendor signers, hashes, installer paths, in turn. */
function ruleBody(orgId: string, i: number): string {
  const kind = i % 4;
  return JSON.stringify({
    orgId,
    name: `cold rule ${i}`,
    verdict: kind === 1 ? 'auto_deny' : kind === 3 ? 'require_approval' : 'auto_approve',
    priority: i % 500,
    ...(kind === 0 ? { matchSigner: `Vendor ${i % 3000} Inc.` } : {}),
    ...(kind === 1 ? { matchHash: (i.toString(16).padStart(8, '0')).repeat(8) } : {}),
    ...(kind === 2 ? { matchPathGlob: `C:\\Program Files\\Vendor${i % 2000}\\**\\*.exe` } : {}),
    ...(kind === 3 ? { matchSigner: `Vendor ${i % 2000} Inc.`, matchUser: `CORP\\user${i % 5000}` } : {}),
  });
}

/**
 * An organization with one site, an administrator and `devices` enrolled devices whose agents the
 * service has never seen (no request yet): the start of the cold-start scenarios.
 */
export async function seedColdOrg(ctx: BenchContext, prefix: string, devices: number): Promise<{ ids: Record<string, string>; tokens: string[]; agentIds: string[] }> {
  const label = `${Date.now()}`;
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `${prefix} Partner ${label}` }],
    organizations: [{ key: 'o', partner: 'p', name: `${prefix} Org ${label}` }],
    sites: [{ key: 's', organization: 'o', name: `${prefix} Site` }],
    roles: [{ key: 'admin', scope: 'organization', organization: 'o', name: 'Administrator', permissions: ['*'] }],
    users: [{ key: 'a', email: `${prefix.toLowerCase()}-admin-${label}@bench.example`, memberships: [{ organization: 'o', role: 'admin' }] }],
  });
  const tokens = Array.from({ length: devices }, () => randomBytes(24).toString('base64url'));
  const agentIds = Array.from({ length: devices }, () => randomUUID());
  await ctx.ownerQuery(
    `WITH input AS (SELECT * FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS x(agent_id, token_hash, n)),
     d AS (INSERT INTO devices (org_id, site_id, hostname) SELECT $1, $2, 'COLD-' || n FROM input RETURNING id, hostname)
     INSERT INTO agents (id, org_id, device_id, token_hash)
     SELECT input.agent_id, $1, d.id, input.token_hash FROM d JOIN input ON d.hostname = 'COLD-' || input.n`,
    [ids.o, ids.s, agentIds, tokens.map(tokenHash)],
  );
  return { ids, tokens, agentIds };
}

/**
 * No cold-start cliff: a service started moments before, 400 devices whose agents it has never
 * seen, 1,000 rules created through the API just before the load, and no ANALYZE by hand (the
 * planner has what autovacuum gave it, as in service). The first 10 seconds of ingest at 50
 * connections are their own row, beside the 10 seconds that follow on the same instance (warm)
 * and the bare baseline of the same run. Target: the cold window at least half the warm rate,
 * with p99 under 500 ms.
 */
export const scenario: Scenario = {
  name: `agent ingest, cold start: the first ${COLD_SECONDS} s after ${RULES} rules are created through the API (${DEVICES} devices, 50 conn, no ANALYZE)`,
  order: 41,
  async prepare(ctx): Promise<CustomResult> {
    const { ids, tokens, agentIds } = await seedColdOrg(ctx, 'Cold', DEVICES);
    const admin = `Bearer ${await ctx.token(ids.a, { mfa: true })}`;

    const port = await freePort();
    const service = startChild(join(__dirname, '..', '..', 'src', 'main.js'), { ...ctx.serviceEnv, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntil(service, async () => (await fetch(`${url}/api/v1/health`)).ok);
      let next = 0;
      let refused = 0;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = next++; i < RULES; i = next++) {
            const res = await fetch(`${url}/api/v1/pam/rules`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: ruleBody(ids.o, i) });
            if (res.status !== 201) refused++;
          }
        }),
      );
      if (refused) throw new Error(`${refused} of ${RULES} rule writes were refused`);
      const requests = [{ setupRequest: () => {
        const i = Math.floor(Math.random() * DEVICES);
        return { method: 'POST' as const, path: `/api/v1/agents/${agentIds[i]}/elevation-requests`, headers: { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/json' }, body: promptBody(i) };
      } }];
      const cold = await runLoad(url, COLD_SECONDS, requests);
      const warm = await runLoad(url, COLD_SECONDS, requests);
      const base = await baseline(ctx);
      const name = `agent ingest, first ${COLD_SECONDS} s after ${RULES} rules via the API (${DEVICES} devices, no ANALYZE)`;
      return {
        kind: 'custom',
        rows: [
          { scenario: `${name}: throughput`, value: cold.reqPerSec, unit: 'req/s', target: `≥ 0.5 × warm (${warm.reqPerSec} req/s)`, baseline: { value: base.reqPerSec, label: `bare insert baseline, ${base.reqPerSec} req/s` } },
          { scenario: `${name}: latency p99`, value: cold.p99, unit: 'ms', target: '< 500 ms' },
          { scenario: `${name}: the ${COLD_SECONDS} s after it (warm): throughput`, value: warm.reqPerSec, unit: 'req/s', baseline: { value: base.reqPerSec, label: `bare insert baseline, ${base.reqPerSec} req/s` } },
          { scenario: `${name}: the ${COLD_SECONDS} s after it (warm): latency p99`, value: warm.p99, unit: 'ms' },
          { scenario: `${name}: failed responses (cold, warm)`, value: cold.failed + warm.failed, unit: `of ${cold.total + warm.total}` },
        ],
      };
    } finally {
      service.kill();
    }
  },
};
