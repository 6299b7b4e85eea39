import { join } from 'node:path';
import { freePort } from '../../src/infra/database/embedded-postgres';
import type { CustomResult, Scenario } from '../bench.types';
import { METRICS_TOKEN } from '../service-process';
import { seedColdOrg } from './ingest-cold-start.bench';
import { openLoop, promptBody, startChild, waitUntil } from './ingest.bench';

const DEVICES = Number(process.env.BENCH_FLEET_DEVICES ?? 400);
const RULES = 1000;
/** A fleet's real rate is a few prompts a second; 100/s is a large fleet's busy minute. */
const RATE = 100;
const STEADY_SECONDS = Number(process.env.BENCH_FLEET_STEADY_SECONDS ?? 60);
const WRITERS = 8;


/** Per kind of collection: how many, their total, and how many took over 10 and over 100 ms (the histogram's buckets). */
function gcSummary(metrics: string): string {
  const kinds = new Map<string, { count: number; sum: number; under10: number; under100: number }>();
  for (const line of metrics.split('\n')) {
    const m = /^nodejs_gc_duration_seconds_(count|sum|bucket)\{(?:le="([^"]+)",)?kind="([a-z]+)"\} (\S+)/.exec(line);
    if (!m) continue;
    const k = kinds.get(m[3]) ?? { count: 0, sum: 0, under10: 0, under100: 0 };
    if (m[1] === 'count') k.count = Number(m[4]);
    else if (m[1] === 'sum') k.sum = Number(m[4]);
    else if (m[2] === '0.01') k.under10 = Number(m[4]);
    else if (m[2] === '0.1') k.under100 = Number(m[4]);
    kinds.set(m[3], k);
  }
  return [...kinds].map(([kind, k]) => `${kind} ${k.count} (${Math.round(k.sum * 1000)} ms; over 10 ms: ${k.count - k.under10}, over 100 ms: ${k.count - k.under100})`).join(', ');
}

function ruleBody(orgId: string, i: number): string {
  const kind = i % 3;
  return JSON.stringify({
    orgId,
    name: `fleet rule ${i}`,
    verdict: kind === 1 ? 'auto_deny' : 'auto_approve',
    priority: i % 500,
    ...(kind === 0 ? { matchSigner: `Vendor ${i % 3000} Inc.` } : {}),
    ...(kind === 1 ? { matchHash: i.toString(16).padStart(8, '0').repeat(8) } : {}),
    ...(kind === 2 ? { matchPathGlob: `C:\\Program Files\\Vendor${i % 2000}\\**\\*.exe` } : {}),
  });
}

/**
 * Ingest at a fleet's rate, second by second (issue: no cold cliff, no spikes): an open loop of
 * 100 prompts a second, evenly spaced, from 400 agents, against an instance started moments
 * before: its first 3 seconds (agents it has never seen), then, right after 1,000 rules are created
 * through the API, each of the first 3 seconds and the worst second of the minute that follows.
 * Latency counts from the moment each request was due. No ANALYZE by hand. For finding a cliff's
 * cause: BENCH_FLEET_DEVICES (default 400) and BENCH_FLEET_POOL (the instance's DATABASE_POOL_SIZE)
 * change the fleet and the pool; BENCH_FLEET_STEADY_SECONDS (default 60) the steady minute.
 */
export const scenario: Scenario = {
  name: `agent ingest at a fleet's rate: ${RATE}/s open loop, second by second, after a start and after ${RULES} rules (${DEVICES} devices)`,
  order: 42,
  async prepare(ctx): Promise<CustomResult> {
    const { ids, tokens, agentIds } = await seedColdOrg(ctx, 'Fleet', DEVICES);
    const admin = `Bearer ${await ctx.token(ids.a, { mfa: true })}`;
    const next = () => {
      const i = Math.floor(Math.random() * DEVICES);
      return { method: 'POST', path: `/api/v1/agents/${agentIds[i]}/elevation-requests`, headers: { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/json' }, body: promptBody(i) };
    };

    const port = await freePort();
    const service = startChild(join(__dirname, '..', '..', 'src', 'main.js'), {
      ...ctx.serviceEnv,
      ...(process.env.BENCH_FLEET_POOL ? { DATABASE_POOL_SIZE: process.env.BENCH_FLEET_POOL } : {}),
      METRICS_TOKEN,
      PORT: String(port),
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntil(service, async () => (await fetch(`${url}/api/v1/health/ready`)).ok);
      const afterStart = await openLoop(url, 3, RATE, next);
      let n = 0;
      let refused = 0;
      const statuses: Record<number, number> = {};
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          for (let i = n++; i < RULES; i = n++) {
            const res = await fetch(`${url}/api/v1/pam/rules`, { method: 'POST', headers: { authorization: admin, 'content-type': 'application/json' }, body: ruleBody(ids.o, i) });
            if (res.status !== 201) {
              refused++;
              statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            }
          }
        }),
      );
      if (refused) throw new Error(`${refused} of ${RULES} rule writes were refused (${JSON.stringify(statuses)})`);
      const afterRules = await openLoop(url, 3 + STEADY_SECONDS, RATE, next);
      const seconds = afterRules.perSecondP99!;
      const steady = seconds.slice(3);
      const worst = Math.max(...steady);
      // Garbage collection by kind over the run (prom-client's nodejs_gc_duration_seconds): is a slow second a long pause?
      const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      console.log(`  garbage collection: ${gcSummary(metrics)}`);
      console.log(`  each second's p99 after the rules (ms), from ${afterRules.startedAt!.toISOString().slice(11, 23)} (monotonic ${afterRules.startedMonotonicUs} µs): ${seconds.join(' ')}`);
      const name = `agent ingest, ${RATE}/s open loop`;
      return {
        kind: 'custom',
        rows: [
          { scenario: `${name}: each of the first 3 s after the start (agents never seen), p99`, value: Math.max(...afterStart.perSecondP99!), unit: `ms (${afterStart.perSecondP99!.join(' / ')})`, target: '< 100 ms' },
          { scenario: `${name}: each of the first 3 s after ${RULES} rules via the API, p99`, value: Math.max(...seconds.slice(0, 3)), unit: `ms (${seconds.slice(0, 3).join(' / ')})`, target: '< 100 ms' },
          { scenario: `${name}: the ${STEADY_SECONDS} s after, worst one-second p99`, value: worst, unit: `ms (second ${4 + steady.indexOf(worst)}, from ${new Date(afterRules.startedAt!.getTime() + (3 + steady.indexOf(worst)) * 1000).toISOString().slice(11, 23)}; median second ${[...steady].sort((a, b) => a - b)[Math.floor(steady.length / 2)]} ms)`, target: '< 50 ms' },
          { scenario: `${name}: failed responses`, value: afterStart.failed + afterRules.failed, unit: `of ${afterStart.total + afterRules.total}` },
        ],
      };
    } finally {
      service.kill();
    }
  },
};
