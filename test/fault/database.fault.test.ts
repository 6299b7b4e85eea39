import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AgentKit, prompt } from '../e2e/agent/agent-kit';
import { startTestApp, type TestApp } from '../support/test-app';
import { sleep, startFaultDatabase, type FaultDatabase } from './support/fault-servers';

/** No request may take longer than this, whatever the database does (pool wait + connect + margin). */
const BOUND_MS = 4000;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
  ms: number;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const started = Date.now();
  // Longer than the bound, so a hang shows as a duration over it rather than as an abort.
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(BOUND_MS * 3) });
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, ms: Date.now() - started };
}

/**
 * Issue 18 part 4: PostgreSQL stops (fast and immediate shutdown) and comes back while agents
 * ingest; the pool is exhausted by slow statements; a transaction is left idle. The PostgreSQL
 * is this file's own, so stopping it harms nothing else.
 */
describe('when the database fails under load', () => {
  let db: FaultDatabase;
  beforeAll(async () => {
    db = await startFaultDatabase();
    db.useForTestApps();
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  describe('a restart of PostgreSQL during steady ingest', () => {
    let t: TestApp;
    let kit: AgentKit;
    beforeAll(async () => {
      t = await startTestApp({ DATABASE_POOL_TIMEOUT_MS: '1000' }, { listen: true });
      kit = await new AgentKit(t).seed();
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });

    const ready = () => call(`${t.baseUrl}/api/v1/health/ready`);

    it.each(['fast', 'immediate'] as const)(
      'answers 503 with Retry-After during a %s shutdown, keeps every acknowledged prompt and recovers without a restart of the service',
      async (mode) => {
        const answers: Answer[] = [];
        const accepted: string[] = [];
        let running = true;
        // Three devices, one prompt each every 150 ms: below the per-device rate limit (10 per second).
        const loop = async (device: string) => {
          let pid = 1;
          while (running) {
            const a = kit.agent(device);
            const next = sleep(150);
            const answer = await call(`${t.baseUrl}/api/v1/agents/${a.id}/elevation-requests`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${a.token}` },
              body: JSON.stringify(prompt({ pid: pid++ })),
            });
            answers.push(answer);
            if (answer.status === 201) accepted.push(answer.body.id as string);
            await next;
          }
        };
        const loops = Promise.all(['deviceA1', 'deviceA2', 'deviceB1'].map(loop));
        // Ingest under way before the fault (a busy machine needs longer for the first few).
        for (const until = Date.now() + 10_000; accepted.length < 6 && Date.now() < until; ) await sleep(100);
        const acceptedBefore = accepted.length;

        await db.server.halt(mode);
        const outageStarted = answers.length;
        await sleep(1500);
        const readyDuring = await ready();
        const failedDuring = answers.slice(outageStarted).filter((a) => a.status !== 201).length;
        await db.server.restart();

        let readyAfter = await ready();
        for (const until = Date.now() + 20_000; readyAfter.status !== 200 && Date.now() < until; ) {
          await sleep(200);
          readyAfter = await ready();
        }
        const recovered = answers.length;
        await sleep(1500);
        running = false;
        await loops;

        expect(acceptedBefore).toBeGreaterThan(5);
        expect(readyDuring.status).toBe(503);
        expect(readyDuring.body).toMatchObject({ success: false, statusCode: 503, code: 'not_ready' });
        expect(readyAfter.status).toBe(200);
        expect(failedDuring).toBeGreaterThan(0);
        // Only acceptances and 503s: never a 500, never a hang.
        expect([...new Set(answers.map((a) => a.status))].sort()).toEqual([201, 503]);
        for (const a of answers.filter((x) => x.status === 503)) {
          expect(a.body).toMatchObject({ success: false, statusCode: 503, code: 'database_unavailable', retryAfter: 2 });
          expect(typeof a.body.requestId).toBe('string');
          expect(a.retryAfter).toBe('2');
          expect(JSON.stringify(a.body)).not.toMatch(/terminat|ECONN|postgres|administrator/i);
        }
        expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(BOUND_MS);
        // After recovery ingest is accepted again on the same process.
        expect(answers.slice(recovered).filter((a) => a.status === 201).length).toBeGreaterThan(3);
        // Every prompt answered 201 is stored.
        const stored = await db.query<{ n: string }>(`SELECT count(*) AS n FROM elevation_requests WHERE id = ANY($1::uuid[])`, [accepted]);
        expect(Number(stored[0].n)).toBe(accepted.length);
      },
      90_000,
    );
  });

  describe('a pool exhausted by slow statements', () => {
    let t: TestApp;
    let kit: AgentKit;
    beforeAll(async () => {
      t = await startTestApp(
        { DATABASE_POOL_SIZE: '2', DATABASE_POOL_TIMEOUT_MS: '500', DATABASE_STATEMENT_TIMEOUT_MS: '1500', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1000' },
        { listen: true },
      );
      kit = await new AgentKit(t).seed();
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });

    it('runs the request role with the configured statement and idle-in-transaction timeouts', async () => {
      const rows = await t.app.get(DataSource).query(`SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i`);
      expect(rows[0]).toEqual({ s: '1500ms', i: '1s' });
    });

    it('answers 503 with Retry-After within the bounds while every connection waits, and serves again once the wait ends', async () => {
      // An operator's transaction holds the table every prompt is written to: each ingest waits on the lock with a connection.
      const blocker = new Client({ connectionString: db.ownerUrl });
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE elevation_requests IN ACCESS EXCLUSIVE MODE');
      const a = kit.agent('deviceA1');
      const b = kit.agent('deviceA2');
      const c = kit.agent('deviceB1');
      const ingest = (agent: { id: string; token: string }, pid: number) =>
        call(`${t.baseUrl}/api/v1/agents/${agent.id}/elevation-requests`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
          body: JSON.stringify(prompt({ pid })),
        });
      let answers: Answer[];
      try {
        answers = await Promise.all([a, b, c, a, b, c, a, b].map((agent, i) => ingest(agent, 100 + i)));
      } finally {
        await blocker.query('ROLLBACK');
        await blocker.end();
      }
      const after = await ingest(a, 200);

      // Two requests held the two connections until statement_timeout; the others gave up waiting for one.
      expect(answers.map((x) => x.status)).toEqual(Array(8).fill(503));
      for (const x of answers) {
        expect(x.body).toMatchObject({ success: false, statusCode: 503, code: 'database_unavailable' });
        expect(x.retryAfter).toBe('2');
        expect(x.ms).toBeLessThan(BOUND_MS);
      }
      expect(answers.filter((x) => x.body.error === 'The database did not answer in time; retry shortly').length).toBe(8);
      expect(after.status).toBe(201);
    });

    it('takes its connection back from a transaction left idle, so a stuck request cannot hold it', async () => {
      const runner = t.app.get(DataSource).createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      const pid = (await runner.query('SELECT pg_backend_pid() AS pid'))[0].pid as number;
      await sleep(1800);
      const gone = await db.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [pid]);
      const failed = await runner.query('SELECT 1').then(
        () => null,
        (e: Error) => e,
      );
      await runner.release();
      const ok = await call(`${t.baseUrl}/api/v1/health/ready`);

      expect(gone).toEqual([]);
      expect(failed).toBeInstanceOf(Error);
      expect(ok.status).toBe(200);
    });
  });
});
