import { fork, ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { createApp, prepareDatabase } from '../src/bootstrap';
import { loadConfig } from '../src/infra/config/app-config';
import { freePort } from '../src/infra/database/embedded-postgres';
import { SeedService } from '../src/seed/seed.service';
import { TenantTransactionService } from '../src/infra/database/tenant-transaction.service';
import { AuthRepository } from '../src/modules/auth/auth.repository';
import { SessionService } from '../src/modules/auth/session.service';
import { nodeArgs, type BenchContext, type CustomResult, type HttpLoad, type Scenario } from './bench.types';

/**
 * `npm run bench`: a fresh database, a freshly started service instance (its own process), the
 * bare insert baseline measured in the same run, then every scenario file under bench/.
 * Prints one table. BENCH_DURATION (seconds per load, default 10) and BENCH_FILTER (substring of
 * scenario names) tune a run; BENCH_KEEP_DATABASE=true keeps the database for a look afterwards,
 * BENCH_CPU_PROFILE=<dir> profiles the service processes. "CPU ms/req" is the serving process's user + system
 * CPU time during the load divided by the requests it answered: a figure that a busy machine disturbs far
 * less than req/s, for comparing two builds when the machine cannot be had idle.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const FILTER = process.env.BENCH_FILTER ?? '';
const SECRETS = { SECRET_ENCRYPTION_KEY: randomBytes(32).toString('hex'), JWT_SECRET: randomBytes(32).toString('hex') };

interface Row {
  scenario: string;
  reqPerSec?: number;
  p50?: number;
  p99?: number;
  rssMb?: number;
  cpuMsPerReq?: number;
  value?: string;
  ratio?: string;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? /VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

function startChild(script: string, env: Record<string, string>, readyUrl?: string): Promise<ChildProcess> {
  const child = fork(script, [], { env: { ...process.env, ...env }, execArgv: nodeArgs(), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((res, rej) => {
    child.once('exit', (code) => rej(new Error(`${script} exited with ${code}`)));
    if (!readyUrl) {
      child.once('message', () => res(child));
      return;
    }
    const poll = async () => {
      try {
        if ((await fetch(readyUrl)).ok) return res(child);
      } catch {
        /* not up yet */
      }
      setTimeout(poll, 200);
    };
    void poll();
  });
}

/** User + system CPU time of a process so far, in milliseconds (from /proc, clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function load(url: string, l: HttpLoad, pid: number, name: string): Promise<Row> {
  const cpuBefore = cpuMs(pid);
  const result = await autocannon({
    url,
    connections: l.connections,
    duration: l.durationSeconds ?? DURATION,
    requests: l.requests.map((r) => ({ method: r.method, path: r.path, headers: { 'content-type': 'application/json', ...r.headers }, body: r.body })),
  });
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) console.warn(`  ! ${name}: ${bad} of ${result.requests.total} requests failed (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts})`);
  const served = result.requests.total || 1;
  return { scenario: name, reqPerSec: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, rssMb: rssMb(pid), cpuMsPerReq: (cpuMs(pid) - cpuBefore) / served };
}

/**
 * The benchmark's own app runs the jobs, the expiry sweep among them. Generated history must be in
 * the state the sweep keeps (no pending request past its TTL, no elevation past its window):
 * otherwise the sweep rewrites it in batches while the scenario is measured, and every figure
 * includes that work. Warns when a scenario's data leaves the sweep more than one batch to do.
 */
async function warnOfDueSweep(owner: Client, name: string): Promise<void> {
  const [{ due }] = (
    await owner.query<{ due: number }>(
      `SELECT count(*)::int AS due FROM elevation_requests
        WHERE (status = 'pending' AND requested_at <= now() - interval '15 minutes')
           OR (status IN ('approved', 'auto_approved', 'actuating') AND expires_at <= now())`,
    )
  ).rows;
  if (due > 500) console.warn(`  ! ${name}: ${due} requests are due for the expiry sweep; it will run during the measurement`);
}

/** Busy and total jiffies of all CPUs so far (/proc/stat). */
function cpuTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const n = fields.map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: total - n[3] - n[4], total };
}

/**
 * Waits, at most 60 s, until the machine has been quiet for a second: no autovacuum worker running
 * and under a fifth of its CPU busy. A scenario leaves work behind it (vacuums and analyzes of the
 * rows it wrote, instances and a pooler shutting down), and on two cores that work would otherwise
 * run during the next scenario's measurement and count against it.
 */
async function settle(owner: Client): Promise<void> {
  const deadline = Date.now() + 60_000;
  let quiet = 0;
  while (quiet < 4 && Date.now() < deadline) {
    const before = cpuTicks();
    await new Promise((r) => setTimeout(r, 250));
    const after = cpuTicks();
    const [{ n }] = (await owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`)).rows;
    const busy = (after.busy - before.busy) / Math.max(1, after.total - before.total);
    quiet = n === 0 && busy < 0.2 ? quiet + 1 : 0;
  }
  if (quiet < 4) console.warn('  ! the machine was still busy after 60 s; measuring anyway');
}

/**
 * Cancels the pushes a scenario left undelivered. No scenario measures delivery (the benchmark's
 * phones are not real), and the runner's own app, which runs the jobs, would otherwise deliver an
 * ingest scenario's thousands of approval pushes, 50 every 2 seconds, for minutes, during the
 * scenarios after it.
 */
async function cancelLeftPushes(owner: Client): Promise<void> {
  // Rows a push worker holds are skipped (it settles them itself), and the rest are locked in one
  // order: updating them in whatever order the scan met them deadlocked with a worker's own update.
  await owner.query(`BEGIN; SELECT set_config('app.scope', 'system', true);
    UPDATE push_outbox SET status = 'cancelled', last_error = 'benchmark: left undelivered'
     WHERE id IN (SELECT id FROM push_outbox WHERE status = 'pending' ORDER BY id FOR UPDATE SKIP LOCKED); COMMIT`);
}

function scenarioFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return scenarioFiles(p);
    return f.endsWith('.bench.js') ? [p] : [];
  });
}

async function main(): Promise<void> {
  const base = loadConfig({ ...process.env, ...SECRETS, NODE_ENV: 'production', DATABASE_URL: process.env.DATABASE_URL ?? '' });
  const dbName = `rmm_bench_${Date.now()}`;
  let embeddedStop: (() => Promise<void>) | null = null;
  let ownerUrl: string;
  if (base.databaseUrl) {
    const u = new URL(base.databaseUrl);
    u.pathname = `/${dbName}`;
    ownerUrl = u.toString();
  } else {
    const dev = await prepareDatabase({ ...base, isProduction: false, databaseUrl: undefined, dataDir: resolve('.data/bench') });
    embeddedStop = () => dev.embedded!.stop();
    const u = new URL(dev.ownerUrl);
    u.pathname = `/${dbName}`;
    ownerUrl = u.toString();
  }
  const config = { ...base, databaseUrl: ownerUrl, logLevel: 'warn' };
  // Production requires DATABASE_APP_URL; the benchmark derives the request role of its own database as development does.
  const db = await prepareDatabase({ ...config, isProduction: false });
  const owner = new Client({ connectionString: ownerUrl });
  await owner.connect();
  await owner.query('CREATE TABLE bench_baseline (id bigserial PRIMARY KEY, payload text, created_at timestamptz DEFAULT now())');
  await owner.query('GRANT SELECT, INSERT ON bench_baseline TO app_user; GRANT USAGE ON SEQUENCE bench_baseline_id_seq TO app_user');

  const app = await createApp(config, db.appUrl, { logs: false });
  await app.init();
  const ctx: BenchContext = {
    baseUrl: '',
    serviceEnv: {},
    app,
    durationSeconds: DURATION,
    seed: (f) => app.get(SeedService).load(f),
    token: async (userId, o = {}) => {
      const pair = await app.get(TenantTransactionService).withSystemContext('benchmarks mint sessions', async () => {
        const scope = await app.get(AuthRepository).loginScope(userId);
        if (!scope) throw new Error('user has no membership');
        return (await app.get(SessionService).open({ userId, scope: scope.scope, orgId: scope.org_id, partnerId: scope.partner_id, mfa: o.mfa ?? false, authMethod: 'password' })).pair;
      });
      return pair.accessToken;
    },
    ownerQuery: async <T>(sql: string, params: unknown[] = []) => (await owner.query(sql, params)).rows as T[],
  };

  const rows: Row[] = [];
  const basePort = await freePort();
  const baseline = await startChild(join(__dirname, 'baseline-server.js'), { PORT: String(basePort), BASELINE_DATABASE_URL: db.appUrl });
  const baselineRow = await load(`http://127.0.0.1:${basePort}`, { kind: 'http', connections: 50, requests: [{ method: 'POST', path: '/', body: '{"x":1}' }] }, baseline.pid!, 'baseline: node:http + pg, one transactional INSERT (50 conn)');
  baselineRow.ratio = '1.00';
  rows.push(baselineRow);
  baseline.kill();

  const port = await freePort();
  ctx.serviceEnv = { ...SECRETS, NODE_ENV: 'production', DATABASE_URL: ownerUrl, DATABASE_APP_URL: db.appUrl, LOG_LEVEL: 'warn', PAM_ACTUATOR_ENABLED: 'true', START_JOBS: 'false' };
  const server = await startChild(
    join(__dirname, '..', 'src', 'main.js'),
    { ...ctx.serviceEnv, PORT: String(port) },
    `http://127.0.0.1:${port}/api/v1/health`,
  );
  ctx.baseUrl = `http://127.0.0.1:${port}`;

  const scenarios: Scenario[] = [];
  for (const file of scenarioFiles(__dirname)) {
    const mod = (await import(file)) as { scenario?: Scenario; scenarios?: Scenario[] };
    scenarios.push(...(mod.scenarios ?? (mod.scenario ? [mod.scenario] : [])));
  }
  scenarios.sort((a, b) => (a.order ?? 100) - (b.order ?? 100));
  for (const s of scenarios.filter((x) => x.name.includes(FILTER))) {
    process.stderr.write(`• ${s.name}\n`);
    try {
      await settle(owner);
      const plan = await s.prepare(ctx);
      await warnOfDueSweep(owner, s.name);
      if (plan.kind === 'http') {
        await settle(owner);
        const row = await load(ctx.baseUrl, plan, server.pid!, s.name);
        row.ratio = (row.reqPerSec! / baselineRow.reqPerSec!).toFixed(2);
        rows.push(row);
      } else {
        for (const r of (plan as CustomResult).rows) {
          rows.push({
            scenario: r.scenario,
            value: `${r.value} ${r.unit}${r.target ? ` (target ${r.target})` : ''}`,
            ratio: r.baseline ? `${(r.value / r.baseline.value).toFixed(2)} × ${r.baseline.label}` : '',
          });
        }
      }
    } catch (err) {
      rows.push({ scenario: s.name, value: `FAILED: ${(err as Error).message}` });
    }
    await cancelLeftPushes(owner);
  }
  // The service writes its CPU profile (BENCH_CPU_PROFILE) as it exits: wait for that.
  await new Promise<void>((res) => {
    server.removeAllListeners('exit');
    server.once('exit', () => res());
    server.kill();
  });
  await app.close();
  await owner.end();
  if (process.env.BENCH_KEEP_DATABASE === 'true') {
    console.error(`kept the benchmark database: ${ownerUrl}`);
  } else {
    const drop = new Client({ connectionString: ownerUrl.replace(`/${dbName}`, '/postgres') });
    await drop.connect();
    await drop.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await drop.end();
  }
  await embeddedStop?.();

  const cores = cpus().length;
  console.log(`\nBenchmarks (${cores} cores, ${DURATION}s per load, ${new Date().toISOString()})\n`);
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'RSS MB', 'CPU ms/req', 'value', 'ratio to baseline'];
  const table = rows.map((r) => [r.scenario, r.reqPerSec ?? '', r.p50 ?? '', r.p99 ?? '', r.rssMb ?? '', r.cpuMsPerReq?.toFixed(3) ?? '', r.value ?? '', r.ratio ?? ''].map(String));
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(header));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  table.forEach((t) => console.log(line(t)));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
