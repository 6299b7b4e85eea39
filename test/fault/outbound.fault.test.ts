import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import request from 'supertest';
import { PUSH_TIMEOUT_MS } from '../../src/modules/pam/approvals/push/http-push.gateway';
import { PushOutboxWorker } from '../../src/modules/pam/approvals/push/push-outbox.worker';
import { SMTP_TIMEOUTS } from '../../src/modules/auth/mail.service';
import { prompt } from '../e2e/agent/agent-kit';
import { registerPhone, startPamWorld, type PamWorld } from '../e2e/pam-lifecycle/pam-lifecycle.kit';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { sleep, startFaultDatabase, type FaultDatabase } from './support/fault-servers';

/** A push gateway that hangs (accepts the request, never answers), is down (nothing listens) or answers 200. */
class Gateway {
  mode: 'hang' | 'up' = 'hang';
  received = 0;
  private server: Server | null = null;
  private readonly held = new Set<Socket>();
  constructor(readonly port: number) {}
  get url() {
    return `http://127.0.0.1:${this.port}/push`;
  }
  async start(mode: 'hang' | 'up') {
    this.mode = mode;
    this.server = createHttpServer((req, res) => {
      req.resume();
      if (this.mode === 'hang') return;
      req.on('end', () => {
        this.received++;
        res.end('{}');
      });
    });
    this.server.on('connection', (s) => (this.held.add(s), s.on('close', () => this.held.delete(s))));
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
  }
  async stop() {
    for (const s of this.held) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server = null;
  }
}

/**
 * Issue 18 part 4: the push gateway and the SMTP server down or slow. Ingest and the password
 * reset answer at once whatever they do (pushes go through the outbox after commit, mail after the
 * response); every outbound wait is bounded; the outbox delivers once the gateway answers, with
 * each failed attempt recorded. The push worker is driven through runOnce(), not its timer.
 */
describe('when the push gateway and the SMTP server fail', () => {
  let db: FaultDatabase;
  let w: PamWorld;
  let gateway: Gateway;
  /** An SMTP server that accepts connections and never greets: the slow case. */
  const smtp = createTcpServer();
  const smtpConnections: { opened: number; closed?: number }[] = [];

  beforeAll(async () => {
    db = await startFaultDatabase();
    db.useForTestApps();
    gateway = new Gateway(await freePort());
    await gateway.start('hang');
    smtp.on('connection', (s) => {
      const c: { opened: number; closed?: number } = { opened: Date.now() };
      smtpConnections.push(c);
      s.on('close', () => (c.closed = Date.now()));
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    w = await startPamWorld({ PUSH_GATEWAY_URL: gateway.url, SMTP_URL: `smtp://127.0.0.1:${(smtp.address() as AddressInfo).port}` });
    await registerPhone(w, 'adminA', `fault-push-${w.ids.adminA}`).expect(201);
    await db.query(`INSERT INTO pam_org_config (org_id, default_unmatched_verdict, default_approval_duration_minutes) VALUES ($1, 'require_approval', 15)`, [w.ids.orgA]);
  }, 120_000);
  afterAll(async () => {
    await w?.t.close();
    await gateway?.stop();
    await new Promise<void>((r) => smtp.close(() => r()));
    await db?.close();
  });

  const outbox = () =>
    db.query<{ status: string; attempts: number; last_error: string | null }>(`SELECT status, attempts, last_error FROM push_outbox ORDER BY created_at`);
  const makeDue = () => db.query(`UPDATE push_outbox SET next_attempt_at = now() WHERE status = 'pending'`);
  const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
    const started = Date.now();
    const value = await fn();
    return [value, Date.now() - started];
  };

  it('accepts prompts and answers password resets at once while both hang, and every outbound wait ends within its bound', async () => {
    const agent = { id: w.agentIds.deviceA1, token: w.agentTokens.deviceA1 };
    const ingests = [];
    for (let i = 0; i < 5; i++) {
      ingests.push(
        await timed(() =>
          request(w.t.http).post(`/api/v1/agents/${agent.id}/elevation-requests`).set('Authorization', `Bearer ${agent.token}`).send(prompt({ pid: 900 + i })),
        ),
      );
    }
    const [reset, resetMs] = await timed(() => request(w.t.http).post('/api/v1/auth/forgot-password').send({ email: w.f.emails.adminA }));
    const [, pushMs] = await timed(() => w.t.app.get(PushOutboxWorker).runOnce());
    const rows = await outbox();
    // The mail task reached the silent server and gave up on its greeting.
    for (const until = Date.now() + SMTP_TIMEOUTS.greetingTimeout + 3000; !smtpConnections[0]?.closed && Date.now() < until; ) await sleep(100);

    for (const [res, ms] of ingests) {
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('pending');
      expect(ms).toBeLessThan(1000);
    }
    expect(reset.status).toBe(200);
    expect(resetMs).toBeLessThan(1000);
    expect(pushMs).toBeLessThan(PUSH_TIMEOUT_MS + 2000);
    expect(rows).toHaveLength(5);
    for (const r of rows) expect(r).toEqual({ status: 'pending', attempts: 1, last_error: `Push gateway did not answer within ${PUSH_TIMEOUT_MS} ms` });
    expect(smtpConnections).toHaveLength(1);
    expect(smtpConnections[0].closed! - smtpConnections[0].opened).toBeLessThan(SMTP_TIMEOUTS.greetingTimeout + 2000);
  }, 30_000);

  it('records a retry while the gateway is down and delivers every queued push once it answers', async () => {
    await gateway.stop();
    await makeDue();
    const [, downMs] = await timed(() => w.t.app.get(PushOutboxWorker).runOnce());
    const down = await outbox();

    await gateway.start('up');
    await makeDue();
    await w.t.app.get(PushOutboxWorker).runOnce();
    const after = await outbox();

    expect(downMs).toBeLessThan(2000);
    for (const r of down) expect(r).toEqual({ status: 'pending', attempts: 2, last_error: 'Push gateway unreachable (ECONNREFUSED)' });
    expect(after.map((r) => [r.status, r.attempts])).toEqual(Array(5).fill(['delivered', 3]));
    expect(gateway.received).toBe(5);
  }, 30_000);
});
