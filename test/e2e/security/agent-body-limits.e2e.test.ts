import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';
import { AgentKit, prompt } from '../agent/agent-kit';

/**
 * Issue 13, item 9: the 32 KB agent cap applied to JSON only, so the same route parsed a 900 KB
 * form. Agent routes take application/json only and cap every body at 32 KB on the bytes read;
 * other routes take JSON, plus the media types a route is documented to read.
 */

interface RawAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Sends a raw body, optionally chunked (no Content-Length); tolerates the server answering before the body is written. */
function rawPost(baseUrl: string, path: string, headers: Record<string, string>, body: Buffer | string, opts: { chunked?: boolean } = {}): Promise<RawAnswer> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const head = opts.chunked ? { ...headers, 'transfer-encoding': 'chunked' } : { ...headers, 'content-length': String(bytes.length) };
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method: 'POST', headers: head }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    for (let i = 0; i < bytes.length; i += 8192) req.write(bytes.subarray(i, i + 8192));
    req.end();
  });
}

/** A valid ingest body as a form of exactly `bytes` bytes (padded through command_line; no pid, which a form cannot type). */
function formOfSize(bytes: number): string {
  const fields = prompt({ command_line: '', pid: undefined }) as Record<string, string | number>;
  const base = new URLSearchParams(Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)])).toString();
  // Percent-encoded padding: three bytes on the wire per character, so the field stays within its length limit.
  const pad = bytes - base.length;
  return base.replace('command_line=', `command_line=${'%41'.repeat(Math.floor(pad / 3))}${'x'.repeat(pad % 3)}`);
}

/** A valid ingest body as JSON of exactly `bytes` bytes. */
function jsonOfSize(bytes: number): string {
  const base = JSON.stringify(prompt({ command_line: '' }));
  return base.replace('"command_line":""', `"command_line":"${'x'.repeat(bytes - base.length)}"`);
}

const unsupported = { success: false, statusCode: 415, code: 'unsupported_media_type', error: expect.any(String), requestId: expect.any(String) };
const tooLarge = { success: false, statusCode: 413, code: 'payload_too_large', error: expect.any(String), requestId: expect.any(String) };

describe('attack: bodies of other media types around the agent body cap', () => {
  let t: TestApp;
  let k: AgentKit;
  let path: string;
  let auth: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
    k = await new AgentKit(t).seed();
    path = `/api/v1/agents/${k.agent('deviceA2').id}/elevation-requests`;
    auth = { authorization: `Bearer ${k.agent('deviceA2').token}` };
  });
  afterAll(() => t.close());

  async function storedCount(): Promise<number> {
    const [row] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM elevation_requests WHERE device_id = $1`, [k.ids.deviceA2]);
    return row.n;
  }

  it('accepts a JSON body of exactly 32 KB and refuses one byte more with 413', async () => {
    expect(Buffer.byteLength(jsonOfSize(32 * 1024))).toBe(32 * 1024);
    expect((await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/json' }, jsonOfSize(32 * 1024))).status).toBe(201);
    const over = await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/json' }, jsonOfSize(32 * 1024 + 1));
    expect(over).toEqual({ status: 413, body: tooLarge });
  });

  it('refuses a 33 KB form ingest, which used to be recorded', async () => {
    const before = await storedCount();
    expect(formOfSize(33 * 1024)).toHaveLength(33 * 1024);
    const res = await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, formOfSize(33 * 1024));
    expect(res).toEqual({ status: 415, body: unsupported });
    expect(await storedCount()).toBe(before);
  });

  it('refuses a small, valid form ingest too: agent routes read JSON only', async () => {
    const res = await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, formOfSize(1024));
    expect(res).toEqual({ status: 415, body: unsupported });
  });

  it('refuses a 900 KB form without parsing it, with or without a Content-Length', async () => {
    const before = await storedCount();
    const big = formOfSize(900 * 1024);
    expect((await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, big)).status).toBe(415);
    expect((await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, big, { chunked: true })).status).toBe(415);
    expect(await storedCount()).toBe(before);
  });

  it('refuses text/plain, a vendor JSON type and a body without any content type', async () => {
    const json = jsonOfSize(1024);
    for (const type of ['text/plain', 'application/vnd.rmm-import+json', 'application/octet-stream', 'multipart/form-data; boundary=x']) {
      expect(await rawPost(t.baseUrl, path, { ...auth, 'content-type': type }, json)).toEqual({ status: 415, body: unsupported });
    }
    expect(await rawPost(t.baseUrl, path, auth, json)).toEqual({ status: 415, body: unsupported });
  });

  it('refuses a compressed JSON body instead of inflating it past the cap', async () => {
    const bomb = gzipSync(jsonOfSize(32 * 1024 - 10).replace(/x/g, 'y') + ' '.repeat(4 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(32 * 1024);
    const res = await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb);
    expect(res).toEqual({ status: 415, body: unsupported });
  });

  it('applies the same rules to every agent route, e.g. a command result', async () => {
    const result = `/api/v1/agents/${k.agent('deviceA2').id}/commands/${crypto.randomUUID()}/result`;
    expect(await rawPost(t.baseUrl, result, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, 'status=completed')).toEqual({ status: 415, body: unsupported });
    const big = JSON.stringify({ status: 'failed', error: 'e'.repeat(40 * 1024) });
    expect((await rawPost(t.baseUrl, result, { ...auth, 'content-type': 'application/json' }, big)).status).toBe(413);
  });

  it('still serves agent GETs without a body, and JSON with a charset', async () => {
    await request(t.http).get(`/api/v1/agents/${k.agent('deviceA2').id}/pam-settings`).set('Authorization', auth.authorization).expect(200);
    expect((await rawPost(t.baseUrl, path, { ...auth, 'content-type': 'application/json; charset=utf-8' }, jsonOfSize(2048))).status).toBe(201);
  });

  describe('other routes', () => {
    let admin: string;
    beforeAll(async () => {
      admin = `Bearer ${await t.token(k.ids.adminA, { mfa: true })}`;
    });

    it('refuse a form or a text body on a JSON route', async () => {
      const sites = '/api/v1/sites';
      expect(await rawPost(t.baseUrl, sites, { authorization: admin, 'content-type': 'application/x-www-form-urlencoded' }, 'name=Form+site')).toEqual({ status: 415, body: unsupported });
      expect(await rawPost(t.baseUrl, sites, { authorization: admin, 'content-type': 'text/plain' }, '{"name":"Text site"}')).toEqual({ status: 415, body: unsupported });
      expect(await rawPost(t.baseUrl, sites, { authorization: admin }, '{"name":"Untyped site"}')).toEqual({ status: 415, body: unsupported });
      const [row] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM sites WHERE name IN ('Form site', 'Text site', 'Untyped site')`);
      expect(row.n).toBe(0);
    });

    it('refuse a 900 KB form on a JSON route without parsing it', async () => {
      const res = await rawPost(t.baseUrl, '/api/v1/organizations', { 'content-type': 'application/x-www-form-urlencoded' }, `name=${'x'.repeat(900 * 1024)}`, { chunked: true });
      expect(res).toEqual({ status: 415, body: unsupported });
    });

    it('keep the form post of the SAML assertion consumer, which the HTTP-POST binding requires', async () => {
      const res = await request(t.http).post('/api/v1/sso/saml/acs').type('form').send({ SAMLResponse: 'bm90IHhtbA==', RelayState: 'nope' });
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/^\/login\?error=/);
    });
  });
});
