import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { ingestAgents, sustainedIngest, type IngestAgent } from './ingest-load';
import { scratchDatabase, send, startService, type ServiceProcess } from './service-process';

const GRACE_MS = 8000;
const LISTEN_MS = 1500;
const BOOT_MS = 180_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How often each value occurs, for a failure message. */
const countBy = (values: readonly (string | number)[]) => values.reduce<Record<string, number>>((n, v) => ({ ...n, [v]: (n[v] ?? 0) + 1 }), {});

/**
 * Issue 14 part 3 and issue 18's SIGTERM fault: the real service (src/main.ts) in a child
 * process, real signals. Agents ingest on keep-alive connections while the signal arrives; a
 * request whose body is still arriving is in flight across it.
 */
describe('graceful shutdown of a running instance', () => {
  const db = scratchDatabase();
  let service: ServiceProcess | undefined;
  /** The demo device's agent and three more enrolled beside it: one per ingest loop (each device has its own rate limit). */
  let agents: IngestAgent[] = [];

  const start = async () => {
    service = await startService(db, { SHUTDOWN_GRACE_MS: String(GRACE_MS), SHUTDOWN_LISTEN_MS: String(LISTEN_MS) });
    if (!agents.length) agents = await ingestAgents(db, 3);
    return service;
  };

  /**
   * A password sign-in of the demo technician whose headers and first part of body are sent now;
   * `finish` sends the rest and reads the answer.
   */
  const slowSignIn = (port: number): Promise<{ socket: Socket; finish(): Promise<string> }> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ email: 'admin@demo-msp.example', password: 'demo-password-123' });
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 40)}`,
        );
        let answer = '';
        socket.setEncoding('utf8');
        socket.on('data', (c: string) => (answer += c));
        const ended = new Promise<string>((res) => socket.on('close', () => res(answer)));
        resolve({
          socket,
          finish: async () => {
            socket.write(body.slice(40));
            return ended;
          },
        });
      });
      socket.on('error', reject);
    });

  afterEach(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    service = undefined;
  });
  afterAll(() => db.drop());

  it(
    'answers readiness 503 at once, finishes in-flight requests, stores every accepted prompt and exits 0 within the grace period',
    async () => {
      const s = await start();
      let signalledAt = 0;
      // Four agents ingesting back to back on kept-alive connections until the instance refuses connections.
      const { accepted, statuses, errors, done: loops } = sustainedIngest(s.port, agents, () => signalledAt > 0);
      // Ingest under way before the signal: 40 prompts accepted (1.5 s on an idle machine), however busy the machine is.
      const started = Date.now();
      while (accepted.length < 40 && Date.now() - started < 30_000) await sleep(50);
      const slow = await slowSignIn(s.port);
      await sleep(500);

      const acceptedBefore = accepted.length;
      const answeredBefore = statuses.length;
      signalledAt = Date.now();
      s.child.kill('SIGTERM');
      await sleep(200);
      const ready = await send({ port: s.port, method: 'GET', path: '/api/v1/health/ready' });
      const live = await send({ port: s.port, method: 'GET', path: '/api/v1/health' });
      // The request whose body was still arriving when the signal came completes.
      await sleep(LISTEN_MS);
      const slowAnswer = await slow.finish();
      await loops;
      const exit = await s.exited;

      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toMatchObject({ success: false, statusCode: 503, code: 'draining' });
      expect(ready.headers.connection).toBe('close');
      expect(live.status).toBe(200);
      expect(slowAnswer).toMatch(/^HTTP\/1\.1 200 /);
      expect(slowAnswer).toMatch(/\r\nConnection: close\r\n/i);
      // The demo technician has TOTP: the sign-in answers with the MFA challenge.
      expect(JSON.parse(slowAnswer.slice(slowAnswer.indexOf('\r\n\r\n') + 4))).toMatchObject({ mfaRequired: true });

      // Ingest went on during the listen window; every answer was an acceptance or the device rate limit, never a failure.
      expect(acceptedBefore).toBeGreaterThanOrEqual(40);
      // A failure names the answers after the signal, so that it says whether none came or all were refused.
      const afterSignal = { accepted: accepted.length - acceptedBefore, answers: countBy(statuses.slice(answeredBefore)), errors: countBy(errors) };
      if (afterSignal.accepted <= 0) throw new Error(`no prompt was accepted after SIGTERM: ${JSON.stringify(afterSignal)}`);
      expect(afterSignal.accepted).toBeGreaterThan(0);
      expect(statuses.filter((x) => x !== 201 && x !== 429)).toEqual([]);
      // After the listener closed, new connections are refused (and nothing else went wrong).
      expect(errors.every((e) => e === 'ECONNREFUSED' || e === 'ECONNRESET')).toBe(true);
      expect(errors.length).toBeGreaterThan(0);

      const ids = accepted;
      const stored = await db.query<{ n: string }>(`SELECT count(*) AS n FROM elevation_requests WHERE id = ANY($1::uuid[])`, [ids]);
      expect(Number(stored[0].n)).toBe(ids.length);

      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(exit.at - signalledAt).toBeLessThan(GRACE_MS);
      const output = s.output();
      expect(output).toContain('"context":"Shutdown"');
      expect(output).not.toContain('Called end on pool more than once');
      expect(output).not.toMatch(/"level":(50|60)/);
    },
    BOOT_MS + 60_000,
  );

  it(
    'exits at once with a failure code when a second SIGTERM arrives during the drain',
    async () => {
      const s = await start();
      // A request that never completes holds the drain open until the grace period ends.
      const stuck = await slowSignIn(s.port);
      s.child.kill('SIGTERM');
      await sleep(LISTEN_MS + 500);
      expect(s.child.exitCode).toBeNull();
      const second = Date.now();
      s.child.kill('SIGTERM');
      const exit = await s.exited;
      stuck.socket.destroy();

      expect(exit.code).toBe(143);
      expect(exit.at - second).toBeLessThan(2000);
      expect(s.output()).toContain('SIGTERM again while stopping: exiting at once');
    },
    BOOT_MS + 30_000,
  );

  it(
    'closes idle keep-alive connections so they do not hold the stop until the grace period',
    async () => {
      const s = await start();
      const keepAlive = new Agent({ keepAlive: true, maxSockets: 2 });
      // Two connections left open and idle by a client that keeps them for reuse.
      await Promise.all([0, 1].map(() => send({ port: s.port, method: 'GET', path: '/api/v1/health', agent: keepAlive })));
      const signalled = Date.now();
      s.child.kill('SIGTERM');
      const exit = await s.exited;
      keepAlive.destroy();

      expect(exit.code).toBe(0);
      // The listen window, then the stop itself: far from the grace period.
      expect(exit.at - signalled).toBeLessThan(LISTEN_MS + 2500);
    },
    BOOT_MS + 30_000,
  );
});
