import { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { httpMetrics } from '../../src/infra/metrics/metrics-endpoint';
import { MetricsService } from '../../src/infra/metrics/metrics.service';
import { freePort } from '../../src/infra/database/embedded-postgres';
import type { BenchContext, CustomResult, Scenario } from '../bench.types';
import { METRICS_TOKEN } from '../service-process';
import { DEVICES, seedIngest, startChild, waitUntil } from './ingest.bench';

/**
 * What metrics and tracing cost (issue: metrics, traces, webhooks and an audit stream). Three
 * instances of the service on the same database, alike but for tracing: one with no OTLP endpoint
 * (tracing off, nothing of OpenTelemetry loaded), one recording every trace (the default sampler,
 * `parentbased_always_on`) and one a tenth of them (`parentbased_traceidratio`, 0.1), both exporting
 * to a local OTLP receiver that reads and drops what it gets, and both scraped at /metrics every
 * second (Prometheus scrapes every 15 to 60 s). Each load runs on one after the other, three times,
 * alternating, and each figure is the median round's ratio: a drift of the machine over the run shows
 * in all three and cancels. Loads: agent ingest at saturation (50 connections, 2,000 devices) and
 * `GET /organizations` as a technician with 50 organizations (20 connections).
 *
 * Metrics are counted on every instance (they cannot be switched off, and every request pays their
 * middleware), so the end-to-end ratios hold tracing and scraping; the counting itself is measured
 * apart: the request-timing middleware and an ingest decision counter, called a million times in this
 * process on the service's own MetricsService, as CPU microseconds per request beside the service's
 * CPU per ingest.
 */
const ROUNDS = 3;
const ORGS = 50;

interface Measured {
  reqPerSec: number;
  p99: number;
  cpuMsPerReq: number;
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startInstance(ctx: BenchContext, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  // API instances (START_JOBS=false, the runner's own app runs the jobs) with pools of 10: three
  // instances of the default 20, warmed in full, and their job workers would take the database's last
  // connections (max_connections 100), and a refused connection answers 503.
  const child = startChild(join(__dirname, '..', '..', 'src', 'main.js'), { ...ctx.serviceEnv, METRICS_TOKEN, START_JOBS: 'false', DATABASE_POOL_SIZE: '10', ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(child, async () => (await fetch(`${url}/api/v1/health/ready`)).ok);
  return { url, child };
}

/** An OTLP/HTTP traces receiver that reads every export and drops it, counting the bytes. */
async function otlpSink(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function measure(url: string, pid: number, connections: number, seconds: number, requests: autocannon.Request[]): Promise<Measured> {
  const before = cpuMs(pid);
  const r = await autocannon({ url, connections, duration: seconds, requests });
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad > 0) throw new Error(`${bad} of ${r.requests.total} requests failed against ${url} (${JSON.stringify(r.statusCodeStats)}): the comparison would measure refusals`);
  return { reqPerSec: Math.round(r.requests.average), p99: r.latency.p99, cpuMsPerReq: (cpuMs(pid) - before) / Math.max(1, r.requests.total) };
}

/** CPU microseconds the metrics of one ingest cost in the service: its request timing and its decision counter. */
function countingMicros(): number {
  const metrics = new MetricsService({ pool: () => ({ totalCount: 0, idleCount: 0, waitingCount: 0 }) } as never, { running: false } as never, { nodeEnv: 'production' } as never);
  const middleware = httpMetrics(metrics, 'api/v1');
  const req = { method: 'POST', route: { path: '/api/v1/agents/:id/elevation-requests' }, originalUrl: '/api/v1/agents/x/elevation-requests' };
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = Object.assign(new EventEmitter(), { statusCode: 201, writableFinished: true });
      middleware(req as never, res as never, () => undefined);
      res.emit('close');
      metrics.ingestDecision('pending', 'standard');
    }
  };
  run(100_000);
  const n = 1_000_000;
  const start = process.cpuUsage();
  run(n);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round1 = (x: number) => Math.round(x * 10) / 10;

export const scenario: Scenario = {
  name: 'metrics and tracing: what they cost ingest and GET /organizations',
  order: 95,
  async prepare(ctx): Promise<CustomResult> {
    const ingest = await seedIngest(ctx);
    const label = `${Date.now()}`;
    const ids = await ctx.seed({
      partners: [{ key: 'p', name: `Tracing Partner ${label}` }],
      organizations: Array.from({ length: ORGS }, (_, i) => ({ key: `o${i}`, partner: 'p', name: `Tracing Org ${i}` })),
      roles: [{ key: 'r', scope: 'partner', partner: 'p', name: 'Tech', permissions: ['*'] }],
      users: [{ key: 'u', email: `tracing-${label}@bench.example`, partnerMembership: { partner: 'p', role: 'r', orgAccess: 'all' } }],
    });
    const orgsRequest = { method: 'GET' as const, path: '/api/v1/organizations', headers: { authorization: `Bearer ${await ctx.token(ids.u)}` } };

    const sink = await otlpSink();
    const started: { url: string; child: ChildProcess }[] = [];
    const start = async (env: Record<string, string>) => {
      const instance = await startInstance(ctx, env);
      started.push(instance);
      return instance;
    };
    const scrapers: NodeJS.Timeout[] = [];
    const seconds = ctx.durationSeconds;
    const loads = {
      ingest: { connections: 50, requests: [{ setupRequest: () => ingest(Math.floor(Math.random() * DEVICES)) }] as autocannon.Request[] },
      organizations: { connections: 20, requests: [orgsRequest] as autocannon.Request[] },
    };
    type Runs = { off: Measured[]; all: Measured[]; tenth: Measured[] };
    const results: Record<keyof typeof loads, Runs> = { ingest: { off: [], all: [], tenth: [] }, organizations: { off: [], all: [], tenth: [] } };
    try {
      const off = await start({});
      const all = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
      const tenth = await start({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
      const traced = { all, tenth };
      for (const i of [all, tenth]) {
        scrapers.push(setInterval(() => void fetch(`${i.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text()).catch(() => undefined), 1000));
      }
      for (const [name, l] of Object.entries(loads) as [keyof typeof loads, (typeof loads)['ingest']][]) {
        // One short load on each first: the first seconds of an instance are not what this measures.
        for (const i of [off, all, tenth]) await measure(i.url, i.child.pid!, l.connections, 3, l.requests);
        for (let round = 0; round < ROUNDS; round++) {
          results[name].off.push(await measure(off.url, off.child.pid!, l.connections, seconds, l.requests));
          for (const [k, i] of Object.entries(traced) as ['all' | 'tenth', typeof all][]) results[name][k].push(await measure(i.url, i.child.pid!, l.connections, seconds, l.requests));
        }
      }
    } finally {
      scrapers.forEach(clearInterval);
      // Every instance that started, also when a later one failed to: none outlives the run.
      for (const i of started) i.child.kill('SIGTERM');
      await sink.close();
    }
    if (sink.bytes() === 0) throw new Error('the traced instances exported no span: the comparison would measure nothing');

    const micros = countingMicros();
    const rows: CustomResult['rows'] = [];
    const sampling = { all: 'every trace (parentbased_always_on, the default)', tenth: 'a tenth of traces (parentbased_traceidratio 0.1)' };
    for (const name of Object.keys(loads) as (keyof typeof loads)[]) {
      const offs = results[name].off;
      const label = name === 'ingest' ? 'agent ingest at saturation (50 conn)' : `GET /organizations, ${ORGS} organizations (20 conn)`;
      for (const k of ['all', 'tenth'] as const) {
        const ons = results[name][k];
        const ratios = ons.map((o, i) => o.reqPerSec / offs[i].reqPerSec);
        const mid = ratios.indexOf(median(ratios));
        const cost = round1((1 - ratios[mid]) * 100);
        rows.push({
          scenario: `${label}: tracing ${sampling[k]} and scrapes, throughput, median of ${ROUNDS} alternating rounds`,
          value: ons[mid].reqPerSec,
          unit: `req/s (${cost} % less; rounds ${ratios.map((r) => `${round1((1 - r) * 100)} %`).join(', ')}; CPU ${Math.round(ons[mid].cpuMsPerReq * 1000) / 1000} / ${Math.round(offs[mid].cpuMsPerReq * 1000) / 1000} ms a request; p99 ${ons[mid].p99} / ${offs[mid].p99} ms)`,
          target: '≤ 5 % less',
          baseline: { value: offs[mid].reqPerSec, label: `the same build without tracing, ${offs[mid].reqPerSec} req/s in that round` },
        });
      }
    }
    const ingestCpuMicros = median(results.ingest.off.map((m) => m.cpuMsPerReq)) * 1000;
    rows.push({
      scenario: 'metrics counting per ingest (request timing + decision counter), in CPU time',
      value: Math.round(micros * 100) / 100,
      unit: `µs (${((micros / ingestCpuMicros) * 100).toFixed(2)} % of the service's ${Math.round(ingestCpuMicros)} µs of CPU per ingest)`,
      target: '≤ 5 %',
    });
    return { kind: 'custom', rows };
  },
};
