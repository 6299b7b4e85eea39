import { ChildProcess, spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import Redis from 'ioredis';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { AgentKit, prompt } from './agent-kit';

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((res) => {
      const s = createConnection(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), res(true)));
      s.once('error', () => res(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

describe.each([
  ['PostgreSQL', false],
  ['Redis', true],
])('per-device ingest rate limit shared by two instances (%s)', (_name, useRedis) => {
  let redis: ChildProcess | null = null;
  let redisUrl = '';
  let one: TestApp;
  let two: TestApp;
  let k1: AgentKit;
  let k2: AgentKit;

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (useRedis) {
      const port = await freePort();
      redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: 'ignore' });
      await waitForPort(port);
      redisUrl = `redis://127.0.0.1:${port}`;
      env.REDIS_URL = redisUrl;
    }
    one = await startTestApp(env);
    two = await startTestApp(env);
    k1 = await new AgentKit(one).seed();
    k2 = Object.assign(new AgentKit(two), { fx: k1.fx, ids: k1.ids });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    if (redis && redis.exitCode === null && redis.signalCode === null) redis.kill();
  });

  /** Puts `tokens` in the device's bucket and stops its refill for a minute, so counts do not depend on timing. */
  async function freeze(key: string, tokens: number): Promise<void> {
    const orgId = k1.ids.orgA;
    const deviceId = k1.ids[key];
    if (useRedis) {
      const client = new Redis(redisUrl);
      await client.hset(`pam:ingest-rate:${orgId}:${deviceId}`, 'tokens', String(tokens), 'ts', String(Date.now() + 60_000));
      client.disconnect();
    } else {
      await ownerQuery(
        `INSERT INTO agent_rate_buckets (org_id, device_id, tokens, refilled_at) VALUES ($1, $2, $3, clock_timestamp() + interval '1 minute')
         ON CONFLICT (org_id, device_id) DO UPDATE SET tokens = $3, refilled_at = clock_timestamp() + interval '1 minute'`,
        [orgId, deviceId, tokens],
      );
    }
  }

  it('admits a burst of at least 20 from a fresh bucket, and no more than refills meanwhile', async () => {
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 30 }, () => k1.ingest('deviceA1', prompt())));
    const elapsedSeconds = (Date.now() - started) / 1000;
    const admitted = results.filter((r) => r.status === 201).length;
    expect(results.every((r) => r.status === 201 || r.status === 429)).toBe(true);
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(20 + Math.floor(elapsedSeconds * 10) + 1);
  });

  it('spends one bucket from both instances: what one admitted, the other cannot', async () => {
    await freeze('deviceA2', 3);
    await k1.ingest('deviceA2', prompt()).expect(201);
    await k2.ingest('deviceA2', prompt()).expect(201);
    await k1.ingest('deviceA2', prompt()).expect(201);
    const refused = await k2.ingest('deviceA2', prompt()).expect(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    expect(refused.headers['retry-after']).toBe('1');
    await k1.ingest('deviceA2', prompt()).expect(429);
    await k2.ingest('deviceB1', prompt()).expect(201);
  });

  it('counts concurrent requests of one device on both instances exactly once each', async () => {
    await freeze('deviceA2', 10);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? k1 : k2).ingest('deviceA2', prompt())));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 429)).toHaveLength(20);
  });

  if (useRedis) {
    it('keeps recording prompts when Redis stops answering', async () => {
      const exited = new Promise((r) => redis!.once('exit', r));
      redis!.kill();
      await exited;
      const res = await k1.ingest('deviceB1', prompt()).expect(201);
      expect(res.body.status).toBe('pending');
    });
  }
});
