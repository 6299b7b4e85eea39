import { ChildProcess, fork } from 'node:child_process';
import * as http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { tokenHash } from '../../src/infra/crypto/secret-box.service';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { nodeArgs, type BenchContext, type CustomResult, type Scenario } from '../bench.types';

export const RULES = 1000;
export const DEVICES = 2000;
const SITES = 10;
export const CONNECTIONS = 50;

const hex = (i: number) => i.toString(16).padStart(8, '0').repeat(8).slice(0, 64);

/**
 * 1,000 enabled rules as an MSP organization accumulates them: vendor signers approved, file
 * hashes denied, path globs under Program Files, per-user rules on a parent process, site-scoped
 * rules, command-line substrings and negated signers every request has to visit, and tool-action
 * rules that prompts never see.
 */
const RULES_SQL = `
  INSERT INTO pam_rules (org_id, site_id, name, verdict, priority, match_signer, match_hash, match_path_glob, match_parent_image,
                         match_user, match_command_line, match_tool_name, match_negate, created_at)
  SELECT $1,
         CASE WHEN i % 10 = 0 THEN ($2::uuid[])[1 + i % array_length($2::uuid[], 1)] END,
         'bench rule ' || i,
         CASE i % 20 WHEN 0 THEN 'auto_approve' WHEN 1 THEN 'auto_approve' WHEN 2 THEN 'auto_approve' WHEN 3 THEN 'auto_approve'
                     WHEN 4 THEN 'auto_approve' WHEN 5 THEN 'auto_approve' ELSE (ARRAY['auto_approve', 'auto_deny', 'require_approval'])[1 + i % 3] END,
         i % 500,
         CASE WHEN i % 20 < 6 OR i % 20 = 19 THEN 'Vendor ' || (i % 3000) || ' Inc.' WHEN i % 20 BETWEEN 10 AND 13 AND i % 2 = 1 THEN 'Vendor ' || (i % 2000) || ' Inc.' END,
         CASE WHEN i % 20 BETWEEN 6 AND 9 THEN substr(repeat(lpad(to_hex(i), 8, '0'), 8), 1, 64) END,
         CASE WHEN i % 20 BETWEEN 10 AND 13 THEN 'C:\\Program Files\\Vendor' || (i % 2000) || '\\**\\*.exe' END,
         CASE WHEN i % 20 BETWEEN 14 AND 15 THEN 'C:\\Windows\\explorer.exe' END,
         CASE WHEN i % 20 BETWEEN 14 AND 15 OR i % 20 = 19 THEN 'CORP\\user' || (i % 5000) END,
         CASE WHEN i % 20 = 18 THEN '/token' || i END,
         CASE WHEN i % 20 BETWEEN 16 AND 17 THEN (ARRAY['run_script', 'install_software', 'kill_process', 'read_file'])[1 + i % 4] END,
         CASE WHEN i % 20 = 19 THEN ARRAY['signer'] END,
         timestamptz '2025-01-01' + i * interval '1 second'
    FROM generate_series(0, ${RULES - 1}) AS i`;

/** Days of decided history the organization holds before the load. */
const HISTORY_DAYS = 30;
/** Requests of that history: about one per device per day. */
const HISTORY_ROWS = 60_000;

/**
 * The organization's past requests, as the expiry sweep leaves them (denied, expired or revoked:
 * nothing for the sweep to rewrite during the load), spread over the last 30 days and its devices.
 */
const HISTORY_SQL = `
  WITH devs AS (SELECT array_agg(id ORDER BY id) AS ids, array_agg(site_id ORDER BY id) AS sites, count(*)::int AS n FROM devices WHERE org_id = $1)
  INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, target_executable_path,
                                  target_executable_hash, target_executable_signer, requested_at, decided_at, expires_at,
                                  decision_source, pam_rule_name, reason)
  SELECT $1, devs.sites[1 + g % devs.n], devs.ids[1 + g % devs.n], 'uac_intercept', (ARRAY['denied', 'expired', 'expired', 'revoked'])[1 + g % 4],
         'CORP\\user' || (g % 5000), 'C:\\Program Files\\Vendor' || (g % 2000) || '\\setup.exe', md5(g::text) || md5((g + 1)::text),
         'Vendor ' || (g % 2000) || ' Inc.', t.at, t.at + interval '1 minute', t.at + interval '16 minutes', 'pam_rule', 'bench rule ' || (g % 1000),
         'history'
    FROM devs, generate_series(0, ${HISTORY_ROWS - 1}) AS g,
         LATERAL (SELECT now() - make_interval(secs => 60 + g * (${HISTORY_DAYS} * 86400.0 / ${HISTORY_ROWS})) AS at) t`;

/** Three kinds of prompt, in turn: one a vendor rule approves, one a hash rule denies, one no rule matches (pending, fanned out). */
export function promptBody(i: number): string {
  const kind = i % 3;
  const vendor = kind === 0 ? 3 : 5000 + i;
  return JSON.stringify({
    subject_username: `CORP\\user${6000 + i}`,
    target_executable_path: `C:\\Program Files\\Vendor${vendor}\\App ${i % 13}\\bin\\setup${i % 7}.exe`,
    target_executable_hash: kind === 1 ? hex(7) : hex(100_000 + i),
    target_executable_signer: `Vendor ${vendor} Inc.`,
    pid: 1000 + i,
    parent_image: i % 2 ? 'C:\\Windows\\explorer.exe' : 'C:\\Windows\\System32\\cmd.exe',
    command_line: `"C:\\Program Files\\Vendor${vendor}\\setup.exe" /S /log=C:\\Temp\\${i}.log`,
    observed_at: new Date().toISOString(),
  });
}

export interface Load {
  reqPerSec: number;
  p50: number;
  p99: number;
  failed: number;
  total: number;
  /** Open loop only: the p99 of the requests due in each second of the run, in order. */
  perSecondP99?: number[];
  /** Open loop only: the wall-clock time its first second started, to find a slow second in other logs. */
  startedAt?: Date;
  /** Open loop only: the same moment on the monotonic clock (µs), the clock of V8's CPU profiles (their startTime). */
  startedMonotonicUs?: number;
}

/** Offered rate of the open-loop run: what a large fleet really sends, not what saturates the service. */
const OFFERED_RATE = 150;

/** Closed loop: each connection sends its next request when the last one is answered. */
export async function runLoad(url: string, durationSeconds: number, requests: autocannon.Request[]): Promise<Load> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: durationSeconds, requests });
  return { reqPerSec: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, failed: r.non2xx + r.errors + r.timeouts, total: r.requests.total };
}

/**
 * Open loop: one request every 1/rate seconds, evenly spaced, whatever the answers do, each
 * latency measured from the moment the request was due (so a slow service is not excused by
 * sending less). autocannon's overallRate is not that: it gives each connection a budget per
 * second that the connection spends as fast as it can when its second starts, so the whole
 * second's requests leave in one burst, and the latency that comes out is the burst's.
 */
export async function openLoop(url: string, durationSeconds: number, rate: number, next: () => { method: string; path: string; headers: Record<string, string>; body: string }): Promise<Load> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const latencies: number[] = [];
  const bySecond: number[][] = Array.from({ length: Math.ceil(durationSeconds) }, () => []);
  let failed = 0;
  const total = Math.round(durationSeconds * rate);
  const start = performance.now() + 50;
  const startedAt = new Date(Date.now() + 50);
  const startedMonotonicUs = Number(process.hrtime.bigint() / 1000n) + 50_000;
  const sent: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const r = next();
    sent.push(
      new Promise<void>((resolve) => {
        const req = http.request(`${url}${r.path}`, { method: r.method, headers: { ...r.headers, 'content-length': Buffer.byteLength(r.body) }, agent }, (res) => {
          res.resume();
          res.on('end', () => {
            if ((res.statusCode ?? 500) >= 300) failed++;
            latencies.push(performance.now() - due);
            bySecond[Math.min(bySecond.length - 1, Math.floor((due - start) / 1000))].push(performance.now() - due);
            resolve();
          });
        });
        req.on('error', () => {
          failed++;
          resolve();
        });
        req.end(r.body);
      }),
    );
  }
  const elapsed = (performance.now() - start) / 1000;
  await Promise.all(sent);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  const p99Of = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))] ?? 0);
  };
  return { reqPerSec: Math.round(latencies.length / Math.max(elapsed, durationSeconds)), p50: at(0.5), p99: at(0.99), failed, total, perSecondP99: bySecond.map(p99Of), startedAt, startedMonotonicUs };
}

export function startChild(script: string, env: Record<string, string>): ChildProcess {
  return fork(script, [], { env: { ...process.env, ...env }, execArgv: nodeArgs(), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

export async function waitUntil(child: ChildProcess, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`a benchmark process exited with ${child.exitCode}`);
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error('a benchmark process did not start within 60 s');
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** The runner's bare insert baseline, measured again next to this load with the same settings. */
export async function baseline(ctx: BenchContext): Promise<Load> {
  const port = await freePort();
  const child = startChild(join(__dirname, '..', 'baseline-server.js'), { PORT: String(port), BASELINE_DATABASE_URL: ctx.serviceEnv.DATABASE_APP_URL });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`the baseline server exited with ${code}`)));
    });
    return await runLoad(`http://127.0.0.1:${port}`, ctx.durationSeconds, [{ method: 'POST', path: '/', body: '{"x":1}', headers: { 'content-type': 'application/json' } }]);
  } finally {
    child.kill();
  }
}

/**
 * The organization the ingest scenarios load (this one and the two-instance one): 1,000 rules,
 * 2,000 enrolled devices with their own tokens, the policies and the technicians' phones; returns
 * the request of device `i`, its prompt of kind `i % 3`.
 */
export async function seedIngest(ctx: BenchContext): Promise<(i: number) => { method: 'POST'; path: string; headers: Record<string, string>; body: string }> {
  const label = `${Date.now()}`;
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `Ingest Partner ${label}` }],
    organizations: [{ key: 'o', partner: 'p', name: `Ingest Org ${label}` }],
    sites: Array.from({ length: SITES }, (_, i) => ({ key: `s${i}`, organization: 'o', name: `Site ${i}` })),
    roles: [{ key: 'tech', scope: 'partner', partner: 'p', name: 'Technician', permissions: ['*'] }],
    users: [0, 1].map((i) => ({ key: `t${i}`, email: `ingest-tech${i}-${label}@bench.example`, partnerMembership: { partner: 'p', role: 'tech', orgAccess: 'all' as const } })),
  });
  const sites = Array.from({ length: SITES }, (_, i) => ids[`s${i}`]);
  const tokens = Array.from({ length: DEVICES }, () => randomBytes(24).toString('base64url'));
  const agentIds = Array.from({ length: DEVICES }, () => randomUUID());
  await ctx.ownerQuery(
    `WITH input AS (SELECT * FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS x(agent_id, token_hash, n)),
     d AS (
       INSERT INTO devices (org_id, site_id, hostname)
       SELECT $1, ($2::uuid[])[1 + (n - 1) % array_length($2::uuid[], 1)], 'WS-' || n FROM input
       RETURNING id, hostname
     )
     INSERT INTO agents (id, org_id, device_id, token_hash)
     SELECT input.agent_id, $1, d.id, input.token_hash FROM d JOIN input ON d.hostname = 'WS-' || input.n`,
    [ids.o, sites, agentIds, tokens.map(tokenHash)],
  );
  await ctx.ownerQuery(RULES_SQL, [ids.o, sites]);
  await ctx.ownerQuery(`INSERT INTO pam_rules_versions (org_id, version) VALUES ($1, 1) ON CONFLICT (org_id) DO UPDATE SET version = pam_rules_versions.version + 1`, [ids.o]);
  await ctx.ownerQuery(
    `WITH audit AS (
       INSERT INTO policies (org_id, type, name, features)
       VALUES ($1, 'configuration', 'Audit tools', jsonb_build_object('software', jsonb_build_object('mode', 'audit', 'entries',
         (SELECT jsonb_agg(jsonb_build_object('name', 'tool' || i || '.exe')) FROM generate_series(1, 50) i))))
       RETURNING id
     ), allow AS (
       INSERT INTO policies (org_id, type, name, features)
       VALUES ($1, 'configuration', 'Allowed installers', jsonb_build_object('software', jsonb_build_object('mode', 'allowlist', 'entries',
         (SELECT jsonb_agg(jsonb_build_object('sha256', repeat(lpad(to_hex(i), 8, 'f'), 8))) FROM generate_series(1, 20) i))))
       RETURNING id
     )
     INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, site_id)
     SELECT $2::uuid, $1::uuid, audit.id, 'organization', NULL::uuid FROM audit
     UNION ALL SELECT $2::uuid, $1::uuid, allow.id, 'site', $3::uuid FROM allow`,
    [ids.o, ids.p, sites[0]],
  );
  await ctx.ownerQuery(
    `INSERT INTO mobile_devices (id, user_id, platform, push_token, push_token_hmac)
     SELECT gen_random_uuid(), u, 'ios', 'bench-sealed-token', md5(u::text) FROM unnest($1::uuid[]) AS u`,
    [[ids.t0, ids.t1]],
  );

  const request = (i: number) => ({
    method: 'POST' as const,
    path: `/api/v1/agents/${agentIds[i]}/elevation-requests`,
    headers: { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/json' },
    body: promptBody(i),
  });

  // A database in service holds history and has statistics. Analyzing an empty elevation_requests instead would leave the
  // planner no row count: the generic plans of the foreign-key checks and of the fan-out's lookup of the request by
  // (org_id, id) then tie between the unique index and the list index that also holds both columns, and a tie can pick the
  // list index, which walks every request of the organization (0.26 ms a check after 1,400 rows, growing with the table).
  await ctx.ownerQuery(HISTORY_SQL, [ids.o]);
  await ctx.ownerQuery('ANALYZE');
  return request;
}

/**
 * Sustained agent ingest (spec P4.6) with 1,000 enabled rules in the organization, a software
 * audit policy on the organization and an allowlist on one site, and two technicians with phones
 * (every pending request fans out to them), at 50 connections, against an instance of its own
 * (so that its memory can be read), compared with the bare insert baseline measured just before.
 *
 * Every request comes from a device drawn at random among 2,000, each with its own agent token,
 * so the per-device limit (10 per second, bursts of 20) does not throttle. A fixed request list
 * would not do: autocannon walks the same list on every connection in step, so all 50
 * connections would hit one device at once, queue on its rate-limit row and be refused past 20.
 */
export const scenario: Scenario = {
  name: `agent ingest: POST /agents/:id/elevation-requests (${RULES} rules, ${DEVICES} devices, ${CONNECTIONS} conn)`,
  order: 40,
  async prepare(ctx): Promise<CustomResult> {
    const request = await seedIngest(ctx);

    const port = await freePort();
    const service = startChild(join(__dirname, '..', '..', 'src', 'main.js'), { ...ctx.serviceEnv, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntil(service, async () => (await fetch(`${url}/api/v1/health`)).ok);
      // The three kinds of prompt must take the three paths, or the load would measure something else.
      const outcomes: string[] = [];
      for (const r of [0, 1, 2].map(request)) outcomes.push(((await (await fetch(`${url}${r.path}`, r)).json()) as { status: string }).status);
      if (outcomes.join() !== 'auto_approved,denied,pending') throw new Error(`unexpected outcomes: ${outcomes.join(', ')}`);

      const base = await baseline(ctx);
      const load = await runLoad(url, ctx.durationSeconds, [{ setupRequest: () => request(Math.floor(Math.random() * DEVICES)) }]);
      const offered = await openLoop(url, ctx.durationSeconds, OFFERED_RATE, () => request(Math.floor(Math.random() * DEVICES)));
      const name = `agent ingest (${RULES} rules, ${DEVICES} devices, ${CONNECTIONS} conn)`;
      const open = `agent ingest at ${OFFERED_RATE} req/s offered (open loop, ${RULES} rules, ${DEVICES} devices)`;
      return {
        kind: 'custom',
        rows: [
          { scenario: `${name}: throughput`, value: load.reqPerSec, unit: 'req/s', target: '≥ 0.20 × baseline', baseline: { value: base.reqPerSec, label: `bare insert baseline, ${base.reqPerSec} req/s just before` } },
          { scenario: `${name}: latency p50`, value: load.p50, unit: 'ms' },
          { scenario: `${name}: latency p99`, value: load.p99, unit: 'ms', target: '< 50 ms' },
          { scenario: `${name}: service RSS (peak)`, value: rssMb(service.pid!), unit: 'MB' },
          { scenario: `${name}: failed responses`, value: load.failed, unit: `of ${load.total}` },
          { scenario: `${open}: served`, value: offered.reqPerSec, unit: 'req/s', target: `${OFFERED_RATE} req/s` },
          { scenario: `${open}: latency p50`, value: offered.p50, unit: 'ms' },
          { scenario: `${open}: latency p99`, value: offered.p99, unit: 'ms', target: '< 50 ms' },
          { scenario: `${open}: failed responses`, value: offered.failed, unit: `of ${offered.total}` },
        ],
      };
    } finally {
      service.kill();
    }
  },
};
