import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { AgentKit, prompt, sha256 } from './agent-kit';

/** Sends `body` with Transfer-Encoding: chunked (no Content-Length), in 1 KB chunks. */
function chunkedPost(baseUrl: string, path: string, token: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    // The server may answer and close before the whole body is written.
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    for (let i = 0; i < body.length; i += 1024) req.write(body.slice(i, i + 1024));
    req.end();
  });
}

/** A body of exactly `bytes` bytes: a valid prompt padded through command_line. */
function bodyOfSize(bytes: number): string {
  const base = JSON.stringify(prompt({ command_line: '' }));
  return base.replace('"command_line":""', `"command_line":"${'x'.repeat(bytes - base.length)}"`);
}

describe('agent ingest of elevation prompts: transport, identity, validation, limits', () => {
  let t: TestApp;
  let k: AgentKit;

  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
    k = await new AgentKit(t).seed((fx) => ({
      ...fx,
      devices: [
        ...fx.devices!,
        { key: 'retired', organization: 'orgA', site: 'siteA1', hostname: `retired-${fx.emails.adminA}`, agentId: crypto.randomUUID(), agentToken: `retired-${fx.emails.adminA}` },
        { key: 'burst', organization: 'orgA', site: 'siteA2', hostname: `burst-${fx.emails.adminA}`, agentId: crypto.randomUUID(), agentToken: `burst-${fx.emails.adminA}` },
      ],
    }));
  });
  afterAll(() => t.close());

  it('records a pending uac_intercept request with server-side time and reason, one audit row and one created event', async () => {
    const before = Date.now();
    const res = await k.ingest('deviceA1', prompt({ target_executable_hash: sha256('setup.exe').toUpperCase(), observed_at: '2020-01-01T00:00:00Z' })).expect(201);
    expect(res.body).toEqual({ id: expect.any(String), status: 'pending' });
    const row = await k.request(res.body.id);
    expect(row).toMatchObject({
      org_id: k.ids.orgA,
      site_id: k.ids.siteA1,
      device_id: k.ids.deviceA1,
      flow_type: 'uac_intercept',
      status: 'pending',
      subject_username: 'CORP\\alice',
      target_executable_hash: sha256('setup.exe'),
      target_executable_signer: 'Contoso Ltd',
      pid: 4242,
      reason: 'Elevation prompt for setup.exe observed by the agent',
      decision_source: null,
      expires_at: null,
    });
    const requestedAt = (row.requested_at as Date).getTime();
    expect(requestedAt).toBeGreaterThanOrEqual(before - 5000);
    expect(requestedAt).toBeLessThanOrEqual(Date.now() + 5000);
    expect((row.observed_at as Date).toISOString()).toBe('2020-01-01T00:00:00.000Z');

    const audit = await ownerQuery(`SELECT action, actor_type, actor_id, org_id, details FROM audit_logs WHERE resource_id = $1`, [res.body.id]);
    expect(audit).toEqual([
      expect.objectContaining({ action: 'pam.elevation.request', actor_type: 'agent', actor_id: k.agent('deviceA1').id, org_id: k.ids.orgA, details: expect.objectContaining({ status: 'pending', deviceId: k.ids.deviceA1 }) }),
    ]);
    const events = await ownerQuery(`SELECT type, from_status, to_status, actor_type FROM pam_elevation_events WHERE elevation_request_id = $1`, [res.body.id]);
    expect(events).toEqual([{ type: 'created', from_status: null, to_status: 'pending', actor_type: 'agent' }]);
  });

  it('accepts the minimal body: user, path and hash', async () => {
    const res = await k.ingest('deviceA1', { subject_username: 'bob', target_executable_path: 'C:\\x.exe', target_executable_hash: sha256('x') }).expect(201);
    expect(await k.request(res.body.id)).toMatchObject({ target_executable_signer: null, pid: null, parent_image: null, command_line: null, observed_at: null });
  });

  it('takes the device from the token: another agent\'s path, an unknown token, a user token or no token get 401', async () => {
    const other = k.agent('deviceB1');
    const res = await k.ingest('deviceA1', prompt(), { path: other.id }).expect(401);
    expect(res.body).toMatchObject({ success: false, code: 'unauthenticated' });
    await k.ingest('deviceA1', prompt(), { token: 'not-a-token' }).expect(401);
    await k.ingest('deviceA1', prompt(), { token: (k.admin.adminA as string).slice('Bearer '.length) }).expect(401);
    await request(t.http).post(`/api/v1/agents/${k.agent('deviceA1').id}/elevation-requests`).send(prompt()).expect(401);
    expect(await ownerQuery(`SELECT 1 FROM elevation_requests WHERE device_id = $1`, [k.ids.deviceB1])).toEqual([]);
  });

  it('refuses a decommissioned device whose agent token still resolves', async () => {
    await ownerQuery(`UPDATE devices SET status = 'decommissioned' WHERE id = $1`, [k.ids.retired]);
    const res = await k.ingest('retired', prompt()).expect(403);
    expect(res.body.code).toBe('device_decommissioned');
    expect(await ownerQuery(`SELECT 1 FROM elevation_requests WHERE device_id = $1`, [k.ids.retired])).toEqual([]);
  });

  describe('validation', () => {
    const bad = async (fields: Record<string, unknown>, field: string) => {
      const res = await k.ingest('deviceA2', prompt(fields)).expect(400);
      expect(res.body).toMatchObject({ success: false, code: 'validation_failed' });
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    };

    it('requires the user, the path and the hash', async () => {
      for (const field of ['subject_username', 'target_executable_path', 'target_executable_hash']) await bad({ [field]: undefined }, field);
    });

    it('accepts only a 64-hex SHA-256, of either case, and stores it lower-case', async () => {
      await bad({ target_executable_hash: 'a'.repeat(63) }, 'target_executable_hash');
      await bad({ target_executable_hash: 'a'.repeat(65) }, 'target_executable_hash');
      await bad({ target_executable_hash: 'g'.repeat(64) }, 'target_executable_hash');
      await bad({ target_executable_hash: ` ${'a'.repeat(64)}` }, 'target_executable_hash');
      await bad({ target_executable_hash: 42 }, 'target_executable_hash');
      const ok = await k.ingest('deviceA2', prompt({ target_executable_hash: 'ABCDEF'.repeat(10) + 'ABCD' })).expect(201);
      expect((await k.request(ok.body.id)).target_executable_hash).toBe('abcdef'.repeat(10) + 'abcd');
    });

    it('bounds every text field at its edge', async () => {
      const edges: [string, number][] = [['subject_username', 255], ['target_executable_path', 1024], ['target_executable_signer', 255], ['parent_image', 1024]];
      for (const [field, max] of edges) {
        await k.ingest('deviceA2', prompt({ [field]: 'x'.repeat(max) })).expect(201);
        await bad({ [field]: 'x'.repeat(max + 1) }, field);
        await bad({ [field]: '' }, field);
      }
      await bad({ command_line: '' }, 'command_line');
    });

    it('rejects wrong types, NUL characters, a bad pid, an observed_at without a zone, and unknown fields', async () => {
      await bad({ subject_username: ['a'] }, 'subject_username');
      await bad({ target_executable_path: 'C:\\a\u0000b.exe' }, 'target_executable_path');
      await bad({ pid: -1 }, 'pid');
      await bad({ pid: 1.5 }, 'pid');
      await bad({ pid: '12' }, 'pid');
      await bad({ observed_at: '2025-01-01T10:00:00' }, 'observed_at');
      await bad({ observed_at: 'yesterday' }, 'observed_at');
      await bad({ reason: 'let me in' }, 'reason');
      await bad({ status: 'auto_approved' }, 'status');
      await bad({ device_id: k.ids.deviceB1 }, 'device_id');
    });

    it('answers malformed JSON with 400 invalid_json', async () => {
      const res = await k.ingest('deviceA2', '{"subject_username": ').set('Content-Type', 'application/json').expect(400);
      expect(res.body.code).toBe('invalid_json');
    });
  });

  describe('body size', () => {
    const path = () => `/api/v1/agents/${k.agent('deviceA2').id}/elevation-requests`;

    it('accepts a 32 KB body and answers 413 to one byte more', async () => {
      const exact = bodyOfSize(32 * 1024);
      expect(Buffer.byteLength(exact)).toBe(32 * 1024);
      await request(t.http).post(path()).set('Authorization', `Bearer ${k.agent('deviceA2').token}`).set('Content-Type', 'application/json').send(exact).expect(201);
      const over = await request(t.http).post(path()).set('Authorization', `Bearer ${k.agent('deviceA2').token}`).set('Content-Type', 'application/json').send(bodyOfSize(32 * 1024 + 1));
      expect(over.status).toBe(413);
      expect(over.body).toMatchObject({ success: false, code: 'payload_too_large' });
    });

    it('measures a chunked body on the bytes read: 413 without any Content-Length', async () => {
      const ok = await chunkedPost(t.baseUrl, path(), k.agent('deviceA2').token, bodyOfSize(32 * 1024));
      expect(ok.status).toBe(201);
      const over = await chunkedPost(t.baseUrl, path(), k.agent('deviceA2').token, bodyOfSize(64 * 1024));
      expect(over.status).toBe(413);
      expect(over.body.code).toBe('payload_too_large');
    });
  });

  describe('per-device rate limit', () => {
    it('lets a burst of 20 through and refuses what did not refill meanwhile, without touching other devices', async () => {
      const started = Date.now();
      const results = await Promise.all(Array.from({ length: 60 }, () => k.ingest('burst', prompt())));
      const elapsedSeconds = (Date.now() - started) / 1000;
      const created = results.filter((r) => r.status === 201).length;
      const limited = results.filter((r) => r.status === 429);
      // The burst of 20, plus what refilled at 10 per second while the requests ran.
      expect(created).toBeGreaterThanOrEqual(20);
      expect(created).toBeLessThanOrEqual(20 + Math.floor(elapsedSeconds * 10) + 1);
      expect(created + limited.length).toBe(60);
      const [{ count }] = await ownerQuery<{ count: string }>(`SELECT count(*) FROM elevation_requests WHERE device_id = $1`, [k.ids.burst]);
      expect(Number(count)).toBe(created);
      await k.ingest('deviceA1', prompt()).expect(201);
    });

    it('answers 429 while the bucket holds less than one token, and admits again once it has refilled', async () => {
      const set = (tokens: number, offset: string) =>
        ownerQuery(`UPDATE agent_rate_buckets SET tokens = $2, refilled_at = clock_timestamp() + $3::interval WHERE device_id = $1`, [k.ids.burst, tokens, offset]);
      await set(0.5, '10 seconds');
      const refused = await k.ingest('burst', prompt()).expect(429);
      expect(refused.body).toMatchObject({ success: false, statusCode: 429, code: 'rate_limited', retryAfter: 1 });
      expect(refused.headers['retry-after']).toBe('1');
      // 150 ms at 10 per second is one and a half tokens (at 1 per second it would be 0.15).
      await set(0, '-150 milliseconds');
      await k.ingest('burst', prompt()).expect(201);
    });

    it('counts prompts an ignore rule drops against the limit too', async () => {
      await k.rule('orgA', { verdict: 'ignore', match_path_glob: '**\\noise.exe' });
      const noise = prompt({ target_executable_path: 'C:\\Tools\\noise.exe' });
      await ownerQuery(`UPDATE agent_rate_buckets SET tokens = 1.5, refilled_at = clock_timestamp() + interval '10 seconds' WHERE device_id = $1`, [k.ids.burst]);
      expect((await k.ingest('burst', noise).expect(200)).body).toEqual({ id: null, status: 'ignored' });
      expect((await k.ingest('burst', noise).expect(429)).body.code).toBe('rate_limited');
      await k.clearRules('orgA');
    });
  });
});
