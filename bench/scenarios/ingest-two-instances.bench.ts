import { ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { startPgBouncer, type PgBouncer } from '../../test/support/pgbouncer';
import type { BenchContext, CustomResult, Scenario } from '../bench.types';
import { baseline, CONNECTIONS, DEVICES, RULES, seedIngest, startChild, waitUntil, type Load } from './ingest.bench';

/**
 * Server connections PgBouncer keeps to PostgreSQL: one instance's own pool (DATABASE_POOL_SIZE,
 * 20), so with two instances the clients (40) outnumber the server connections, as in front of a
 * hosted database.
 */
const SERVER_CONNECTIONS = 20;

type IngestRequest = Awaited<ReturnType<typeof seedIngest>>;

/** One closed-loop load on each URL at once (the connections split evenly), summed. */
async function loadOn(urls: string[], durationSeconds: number, request: IngestRequest): Promise<Load> {
  const each = Math.floor(CONNECTIONS / urls.length);
  const runs = await Promise.all(
    urls.map((url) => autocannon({ url, connections: each, duration: durationSeconds, requests: [{ setupRequest: () => request(Math.floor(Math.random() * DEVICES)) }] })),
  );
  const total = runs.reduce((n, r) => n + r.requests.total, 0);
  return {
    reqPerSec: runs.reduce((n, r) => n + Math.round(r.requests.average), 0),
    // Per-run percentiles cannot be merged exactly: p50 weighted by requests served, p99 the worse of the runs.
    p50: Math.round(runs.reduce((n, r) => n + r.latency.p50 * r.requests.total, 0) / Math.max(1, total)),
    p99: Math.max(...runs.map((r) => r.latency.p99)),
    failed: runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
    total,
  };
}

/** Service instances (src/main.js, each its own process) with `env` on top of the run's service environment. */
async function startInstances(ctx: BenchContext, count: number, env: Record<string, string>): Promise<{ urls: string[]; children: ChildProcess[] }> {
  const urls: string[] = [];
  const children: ChildProcess[] = [];
  try {
    // One after the other: both would run the (already applied) migrations under the same lock anyway.
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const child = startChild(join(__dirname, '..', '..', 'src', 'main.js'), { ...ctx.serviceEnv, ...env, PORT: String(port) });
      children.push(child);
      const url = `http://127.0.0.1:${port}`;
      await waitUntil(child, async () => (await fetch(`${url}/api/v1/health/ready`)).ok);
      urls.push(url);
    }
    return { urls, children };
  } catch (err) {
    children.forEach((c) => c.kill());
    throw err;
  }
}

/** The three kinds of prompt take their three paths on every instance, or the load would measure something else. */
async function checkPaths(urls: string[], request: IngestRequest, first: number): Promise<void> {
  for (const [k, url] of urls.entries()) {
    const outcomes: string[] = [];
    for (const r of [0, 1, 2].map((j) => request(first + 3 * k + j))) outcomes.push(((await (await fetch(`${url}${r.path}`, r)).json()) as { status: string }).status);
    if (outcomes.join() !== 'auto_approved,denied,pending') throw new Error(`unexpected outcomes on ${url}: ${outcomes.join(', ')}`);
  }
}

/**
 * Issue 14, part 5: agent ingest (the workload of the ingest scenario: 1,000 rules, 2,000 devices,
 * 50 connections in a closed loop) against two instances whose request role goes through PgBouncer
 * in transaction mode, beside one instance directly on PostgreSQL and one instance through the
 * same PgBouncer, and the bare insert baseline, all measured in this scenario one after the other.
 * Two instances take two simultaneous autocannon runs of 25 connections each (one per instance, as
 * a round-robin balancer would split them), and their throughputs are summed; one instance takes
 * the 50 connections alone. The ratio two instances / one instance is given against both
 * one-instance figures: through the pooler (what adding an instance buys) and direct (what the
 * pooler and the second instance together give against the plain set-up).
 *
 * Everything runs on this machine: the instances, PostgreSQL, PgBouncer and autocannon share its
 * cores, so the ratio says what a second instance buys when nothing else is added.
 */
export const scenario: Scenario = {
  name: `agent ingest, two instances behind PgBouncer (transaction mode; ${RULES} rules, ${DEVICES} devices, ${CONNECTIONS} conn)`,
  order: 41,
  async prepare(ctx): Promise<CustomResult> {
    const request = await seedIngest(ctx);
    const bouncer: PgBouncer = await startPgBouncer({ appUrl: ctx.serviceEnv.DATABASE_APP_URL, poolSize: SERVER_CONNECTIONS });
    const pooled = { DATABASE_APP_URL: bouncer.appUrl, DATABASE_PREPARED_STATEMENTS: 'false' };
    const started: ChildProcess[] = [];
    const run = async (count: number, env: Record<string, string>, first: number): Promise<Load> => {
      const { urls, children } = await startInstances(ctx, count, env);
      started.push(...children);
      try {
        await checkPaths(urls, request, first);
        return await loadOn(urls, ctx.durationSeconds, request);
      } finally {
        children.forEach((c) => c.kill());
      }
    };
    try {
      const base = await baseline(ctx);
      const direct = await run(1, { DATABASE_PREPARED_STATEMENTS: 'false' }, 0);
      const one = await run(1, pooled, 30);
      const two = await run(2, pooled, 60);
      const name = 'agent ingest';
      const via = `PgBouncer ${bouncer.version}, transaction mode, ${SERVER_CONNECTIONS} server connections`;
      const failed = (l: Load) => ({ value: l.failed, unit: `of ${l.total}` });
      return {
        kind: 'custom',
        rows: [
          { scenario: `${name}, bare insert baseline of this scenario`, value: base.reqPerSec, unit: 'req/s' },
          { scenario: `${name}, one instance, direct: throughput`, value: direct.reqPerSec, unit: 'req/s', baseline: { value: base.reqPerSec, label: 'baseline' } },
          { scenario: `${name}, one instance, direct: latency p50 / p99`, value: direct.p50, unit: `/ ${direct.p99} ms` },
          { scenario: `${name}, one instance, direct: failed responses`, ...failed(direct) },
          { scenario: `${name}, one instance behind ${via}: throughput`, value: one.reqPerSec, unit: 'req/s', baseline: { value: base.reqPerSec, label: 'baseline' } },
          { scenario: `${name}, one instance behind the pooler: latency p50 / p99`, value: one.p50, unit: `/ ${one.p99} ms` },
          { scenario: `${name}, one instance behind the pooler: failed responses`, ...failed(one) },
          { scenario: `${name}, two instances behind ${via}: throughput (sum)`, value: two.reqPerSec, unit: 'req/s', baseline: { value: base.reqPerSec, label: 'baseline' } },
          { scenario: `${name}, two instances behind the pooler: latency p50 / p99 (worse instance)`, value: two.p50, unit: `/ ${two.p99} ms` },
          { scenario: `${name}, two instances behind the pooler: failed responses`, ...failed(two) },
          {
            scenario: `${name}, two instances / one instance, both behind the pooler (${cpus().length} cores)`,
            value: Number((two.reqPerSec / Math.max(1, one.reqPerSec)).toFixed(2)),
            unit: '×',
          },
          {
            scenario: `${name}, two instances behind the pooler / one instance direct (${cpus().length} cores)`,
            value: Number((two.reqPerSec / Math.max(1, direct.reqPerSec)).toFixed(2)),
            unit: '×',
          },
        ],
      };
    } finally {
      started.forEach((c) => c.kill());
      await bouncer.stop();
    }
  },
};
