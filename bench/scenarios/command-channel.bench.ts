import { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { tokenHash } from '../../src/infra/crypto/secret-box.service';
import { startPgBouncer, type PgBouncer } from '../../test/support/pgbouncer';
import type { BenchContext, CustomResult, Scenario } from '../bench.types';
import { METRICS_TOKEN } from '../service-process';
import { openLoop, promptBody, startChild, waitUntil } from './ingest.bench';

/**
 * The agent's held command channel (docs/pam-lifecycle.md, "The command channel"):
 * 1. approval to device: agents hold waits (`?wait=30`) on instance A while a technician actuates
 *    their approved elevations on instance B, both instances' request role through PgBouncer in
 *    transaction mode; for each command, the time from the actuation's answer (its commit is
 *    before it) to the wait's answer at the agent, and from the actuation's request being sent.
 *    Beside it, this run's bare PostgreSQL notification: NOTIFY committed on one connection to
 *    its arrival on another.
 * 2. held waits: BENCH_HELD_WAITS agents (default 10,000) each hold a 60 s wait on one instance
 *    of their own; its resident memory before and with them held, per wait; then SIGTERM: how long
 *    until every wait is answered, and the reconnect pauses it hands out.
 */
const SAMPLES = Number(process.env.BENCH_COMMAND_SAMPLES ?? 200);
const HELD = Number(process.env.BENCH_HELD_WAITS ?? 10_000);
/** Devices beside the held fleet that send prompts during the reconnection. */
const INGEST_AGENTS = 400;
/** Commands actuated per second while the waits are held (one after the other, not in a burst). */
const PACE_PER_SECOND = 20;

interface Fleet {
  orgId: string;
  siteId: string;
  technicianToken: string;
  agents: { id: string; token: string; deviceId: string }[];
}

async function seedFleet(ctx: BenchContext, devices: number): Promise<Fleet> {
  const label = randomBytes(3).toString('hex');
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `Channel partner ${label}` }],
    organizations: [{ key: 'o', partner: 'p', name: `Channel org ${label}` }],
    sites: [{ key: 's', organization: 'o', name: 'HQ' }],
    roles: [{ key: 'tech', scope: 'partner', partner: 'p', name: 'Technician', permissions: ['*'] }],
    users: [{ key: 't', email: `channel-tech-${label}@bench.example`, totpSecret: 'JBSWY3DPEHPK3PXP', partnerMembership: { partner: 'p', role: 'tech', orgAccess: 'all' as const } }],
  });
  const agents = Array.from({ length: devices }, () => ({ id: randomUUID(), token: randomBytes(24).toString('base64url'), deviceId: '' }));
  const rows = await ctx.ownerQuery<{ agent_id: string; device_id: string }>(
    `WITH input AS (SELECT * FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS x(agent_id, token_hash, n)),
     d AS (INSERT INTO devices (org_id, site_id, hostname) SELECT $1, $2, 'CH-' || n FROM input RETURNING id, hostname)
     INSERT INTO agents (id, org_id, device_id, token_hash)
     SELECT input.agent_id, $1, d.id, input.token_hash FROM d JOIN input ON d.hostname = 'CH-' || input.n
     RETURNING id AS agent_id, device_id`,
    [ids.o, ids.s, agents.map((a) => a.id), agents.map((a) => tokenHash(a.token))],
  );
  const byAgent = new Map(rows.map((r) => [r.agent_id, r.device_id]));
  for (const a of agents) a.deviceId = byAgent.get(a.id)!;
  await ctx.ownerQuery('ANALYZE');
  return { orgId: ids.o, siteId: ids.s, technicianToken: await ctx.token(ids.t, { mfa: true }), agents };
}

async function approvedRequests(ctx: BenchContext, fleet: Fleet, count: number): Promise<string[]> {
  const rows = await ctx.ownerQuery<{ id: string }>(
    `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, target_executable_path, requested_at, expires_at)
     SELECT $1, $2, d, 'uac_intercept', 'approved', 'CORP\\alice', 'C:\\Tools\\setup.exe', now(), now() + interval '15 minutes'
       FROM unnest($3::uuid[]) WITH ORDINALITY AS x(d, n) ORDER BY n
     RETURNING id`,
    [fleet.orgId, fleet.siteId, fleet.agents.slice(0, count).map((a) => a.deviceId)],
  );
  return rows.map((r) => r.id);
}

async function startInstance(ctx: BenchContext, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = startChild(join(__dirname, '..', '..', 'src', 'main.js'), { ...ctx.serviceEnv, ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(child, async () => (await fetch(`${url}/api/v1/health/ready`)).ok);
  return { url, child };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
};
const round = (x: number) => Math.round(x * 10) / 10;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PostgreSQL alone: a NOTIFY committed on one connection until it arrives on a listening one. */
async function bareNotify(ownerUrl: string, samples: number): Promise<number[]> {
  const listener = new Client({ connectionString: ownerUrl });
  const sender = new Client({ connectionString: ownerUrl });
  await Promise.all([listener.connect(), sender.connect()]);
  try {
    await listener.query('LISTEN bench_channel');
    const out: number[] = [];
    for (let i = 0; i < samples; i++) {
      const arrived = new Promise<number>((resolve) => listener.once('notification', () => resolve(performance.now())));
      const sent = performance.now();
      await sender.query(`SELECT pg_notify('bench_channel', $1)`, [String(i)]);
      out.push((await arrived) - sent);
      await sleep(1000 / PACE_PER_SECOND);
    }
    return out;
  } finally {
    await Promise.all([listener.end(), sender.end()]);
  }
}

async function approvalToDevice(ctx: BenchContext, fleet: Fleet, bouncer: PgBouncer): Promise<{ fromAnswer: number[]; fromRequest: number[]; lost: number }> {
  const pooled = { DATABASE_APP_URL: bouncer.appUrl, DATABASE_PREPARED_STATEMENTS: 'false', PAM_ACTUATOR_ENABLED: 'true' };
  const a = await startInstance(ctx, pooled);
  const b = await startInstance(ctx, pooled);
  try {
    const requests = await approvedRequests(ctx, fleet, SAMPLES);
    const agents = fleet.agents.slice(0, SAMPLES);
    const arrivals = agents.map((agent) =>
      fetch(`${a.url}/api/v1/agents/${agent.id}/commands?wait=60`, { headers: { authorization: `Bearer ${agent.token}` } }).then(async (res) => {
        const at = performance.now();
        const body = (await res.json()) as { commands?: unknown[] };
        return { at, got: res.status === 200 && (body.commands?.length ?? 0) > 0 };
      }),
    );
    await sleep(2000);
    const sent: number[] = [];
    const answered: number[] = [];
    for (const [i, agent] of agents.entries()) {
      sent.push(performance.now());
      const res = await fetch(`${b.url}/api/v1/devices/${agent.deviceId}/actuate-elevation`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fleet.technicianToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ elevationRequestId: requests[i] }),
      });
      answered.push(performance.now());
      if (res.status !== 201) throw new Error(`actuation answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
      await sleep(1000 / PACE_PER_SECOND);
    }
    const got = await Promise.all(arrivals);
    return {
      fromAnswer: got.map((g, i) => Math.max(0, g.at - answered[i])),
      fromRequest: got.map((g, i) => g.at - sent[i]),
      lost: got.filter((g) => !g.got).length,
    };
  } finally {
    a.child.kill();
    b.child.kill();
  }
}

interface Storm {
  before: number;
  held: number;
  drainMs: number;
  pauses: number[];
  answered: number;
  /** Agents holding a wait again on the new instance within 10 s of the signal. */
  rejoinedIn10s: number;
  /** Ingest on the new instance, 100/s open loop from the signal on: p99 of each second. */
  ingestPerSecond: number[];
  /** Waits the instance held when its memory was read, and how long after the last was sent. */
  holding: number;
  connectMs: number;
}

/** The instance's count of held waits, from its metrics. */
async function waitsHeld(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(/^rmm_agent_command_waits (\d+)/m.exec(text)?.[1] ?? 0);
}

/**
 * A deploy: the fleet holds its waits on instance C; a new instance D is up; C gets SIGTERM and
 * answers every wait with a reconnect pause; each agent waits its pause and holds a new wait on
 * D, while D also takes ingest at 100/s (open loop) from the signal on.
 */
async function reconnectStorm(ctx: BenchContext, fleet: Fleet): Promise<Storm> {
  const c = await startInstance(ctx, { METRICS_TOKEN });
  const d = await startInstance(ctx, { METRICS_TOKEN });
  const pid = c.child.pid!;
  const agents = fleet.agents.slice(0, HELD);
  const wait = (url: string, agent: Fleet['agents'][number]) =>
    fetch(`${url}/api/v1/agents/${agent.id}/commands?wait=60`, { headers: { authorization: `Bearer ${agent.token}` } });
  try {
    // Warm the route (and its principal cache) with a few plain polls before the baseline reading.
    for (const agent of agents.slice(0, 20)) await fetch(`${c.url}/api/v1/agents/${agent.id}/commands`, { headers: { authorization: `Bearer ${agent.token}` } });
    await sleep(1000);
    const before = rssMb(pid);
    let signalled = Infinity;
    let rejoinedIn10s = 0;
    const rejoined: Promise<void>[] = [];
    const answers: Promise<{ status: number; pause?: number }>[] = [];
    for (const [i, agent] of agents.entries()) {
      answers.push(
        wait(c.url, agent)
          .then(async (res) => {
            const pause = ((await res.json()) as { reconnectAfterMs?: number }).reconnectAfterMs;
            if (typeof pause === 'number') {
              // The agent comes back after its pause, to the instance that is up.
              rejoined.push(
                sleep(pause).then(() => {
                  if (performance.now() - signalled <= 10_000) rejoinedIn10s++;
                  const again = wait(d.url, agent).then(
                    (r) => void r.body?.cancel(),
                    () => undefined,
                  );
                  void again;
                }),
              );
            }
            return { status: res.status, pause };
          })
          .catch(() => ({ status: 0 })),
      );
      // A fleet connecting over a few seconds, not in one instant.
      if (i % 500 === 499) await sleep(200);
    }
    // Every wait held (the instance's own count), or 50 s (the first waits end at 60 s): how long the
    // fleet took to connect. Read every 2 s: a scrape counts the process's handles, 10,000 sockets here.
    const openedAt = performance.now();
    let holding = 0;
    while (performance.now() - openedAt < 50_000) {
      holding = await waitsHeld(c.url);
      if (holding >= agents.length) break;
      await sleep(2000);
    }
    const connectMs = performance.now() - openedAt;
    await sleep(1000);
    const held = rssMb(pid);
    signalled = performance.now();
    c.child.kill('SIGTERM');
    const ingest = openLoop(d.url, 20, 100, () => {
      const agent = fleet.agents[HELD + Math.floor(Math.random() * INGEST_AGENTS)];
      return { method: 'POST', path: `/api/v1/agents/${agent.id}/elevation-requests`, headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' }, body: promptBody(HELD) };
    });
    const results = await Promise.all(answers);
    const drainMs = performance.now() - signalled;
    await Promise.all(rejoined);
    const load = await ingest;
    return {
      before,
      held,
      drainMs,
      pauses: results.map((r) => r.pause).filter((p): p is number => typeof p === 'number'),
      answered: results.filter((r) => r.status === 200).length,
      rejoinedIn10s,
      ingestPerSecond: load.perSecondP99 ?? [],
      holding,
      connectMs,
    };
  } finally {
    c.child.kill();
    d.child.kill();
  }
}

export const scenario: Scenario = {
  name: 'agent command channel: approval to device across two instances, and held waits',
  order: 45,
  async prepare(ctx): Promise<CustomResult> {
    const fleet = await seedFleet(ctx, Math.max(HELD, SAMPLES) + INGEST_AGENTS);
    const bare = await bareNotify(ctx.serviceEnv.DATABASE_URL, SAMPLES);
    const bouncer = await startPgBouncer({ appUrl: ctx.serviceEnv.DATABASE_APP_URL, poolSize: 20 });
    let latency: Awaited<ReturnType<typeof approvalToDevice>>;
    try {
      latency = await approvalToDevice(ctx, fleet, bouncer);
    } finally {
      await bouncer.stop();
    }
    const waits = await reconnectStorm(ctx, fleet);
    const bareP99 = percentile(bare, 99);
    const perWaitKb = ((waits.held - waits.before) * 1024) / Math.max(1, waits.holding);
    return {
      kind: 'custom',
      rows: [
        { scenario: `commands: bare PostgreSQL NOTIFY to LISTEN, p50 (${SAMPLES} samples)`, value: round(percentile(bare, 50)), unit: 'ms' },
        { scenario: `commands: bare PostgreSQL NOTIFY to LISTEN, p99`, value: round(bareP99), unit: 'ms' },
        {
          scenario: `commands: actuation committed (its answer) on instance B to the command at the agent waiting on A, PgBouncer transaction mode, p50`,
          value: round(percentile(latency.fromAnswer, 50)),
          unit: 'ms',
        },
        {
          scenario: `commands: actuation committed (its answer) on B to the command at the agent waiting on A, p99`,
          value: round(percentile(latency.fromAnswer, 99)),
          unit: 'ms',
          target: '< 100 ms',
          baseline: { value: round(bareP99), label: 'bare NOTIFY to LISTEN p99' },
        },
        { scenario: `commands: actuation request sent on B to the command at the agent on A (the actuation included), p99`, value: round(percentile(latency.fromRequest, 99)), unit: 'ms' },
        { scenario: `commands: waits answered without their command (lost)`, value: latency.lost, unit: `of ${SAMPLES}` },
        { scenario: `held waits: ${HELD.toLocaleString('en')} agents connecting over ${Math.round(HELD / 2500)} s: waits held, and when the last was`, value: waits.holding, unit: `held, ${Math.round(waits.connectMs)} ms after the last was sent` },
        { scenario: `held waits: instance resident memory before, then with them held`, value: round(waits.before), unit: `MB → ${round(waits.held)} MB` },
        { scenario: `held waits: memory per held wait`, value: round(perWaitKb), unit: 'KB' },
        { scenario: `held waits: SIGTERM to the last of ${HELD.toLocaleString('en')} waits answered`, value: Math.round(waits.drainMs), unit: `ms (${waits.answered} answered 200)` },
        {
          scenario: `held waits: reconnect pauses handed out at the drain, min / p50 / max`,
          value: Math.min(...waits.pauses),
          unit: `/ ${percentile(waits.pauses, 50)} / ${Math.max(...waits.pauses)} ms`,
        },
        { scenario: `reconnect storm: agents holding a wait on the new instance within 10 s of the signal`, value: waits.rejoinedIn10s, unit: `of ${HELD}` },
        {
          scenario: `reconnect storm: ingest at 100/s on the new instance meanwhile, worst one-second p99 of seconds 1-10`,
          value: Math.max(...waits.ingestPerSecond.slice(0, 10)),
          unit: `ms (${waits.ingestPerSecond.slice(0, 10).join(' / ')})`,
        },
        {
          scenario: `reconnect storm: the same from the 11th second, worst one-second p99`,
          value: Math.max(...waits.ingestPerSecond.slice(10)),
          unit: 'ms',
          target: '< 100 ms',
        },
      ],
    };
  },
};
