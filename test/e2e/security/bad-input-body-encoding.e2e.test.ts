import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';

/**
 * Issue 15 item 6 and issue 18 part 1: a `Content-Encoding: gzip` body that is not gzip was a
 * 500. Every body-parser and decompression failure keeps its 4xx: a body that does not decode is
 * 400, an encoding or charset the service does not read is 415, a body that inflates past the
 * limit is 413.
 */

const error = (statusCode: number, code: string) => ({ success: false, statusCode, code, error: expect.any(String), requestId: expect.any(String) });

describe('attack: bodies that do not decode', () => {
  let t: TestApp;
  let admin: string;
  let orgA: string;

  beforeAll(async () => {
    // Raw requests over a socket: supertest re-encodes a Buffer body it is told is compressed.
    t = await startTestApp({}, { listen: true });
    const ids = await t.seed(tenantFixture());
    orgA = ids.orgA;
    admin = `Bearer ${await t.token(ids.adminA, { mfa: true })}`;
  });
  afterAll(() => t.close());

  const post = async (path: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  };
  const createSite = (headers: Record<string, string>, body: Buffer | string) => post('/api/v1/sites', { authorization: admin, ...headers }, body);
  const json = (name: string) => JSON.stringify({ orgId: orgA, name });

  it('answers 400 to a gzip, deflate or brotli body that is not what it claims to be', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await createSite({ 'Content-Type': 'application/json', 'Content-Encoding': encoding }, json('Not compressed'));
      expect(res).toEqual({ status: 400, body: error(400, 'invalid_body') });
    }
  });

  it('answers 400 to a truncated gzip body', async () => {
    const res = await createSite({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, gzipSync(json('Truncated')).subarray(0, 20));
    expect(res).toEqual({ status: 400, body: error(400, 'invalid_body') });
  });

  it('answers 400 to a gzip body on the public sign-in route too', async () => {
    const res = await post('/api/v1/auth/login', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, '{"email":"a@b.c","password":"x"}');
    expect(res).toEqual({ status: 400, body: error(400, 'invalid_body') });
  });

  it('answers 415 to an encoding it does not read', async () => {
    for (const encoding of ['compress', 'x-rot13', 'gzip, gzip']) {
      const res = await createSite({ 'Content-Type': 'application/json', 'Content-Encoding': encoding }, json('Unknown encoding'));
      expect(res).toEqual({ status: 415, body: error(415, 'unsupported_media_type') });
    }
  });

  it('answers 415 to a charset it does not read', async () => {
    for (const charset of ['latin1', 'utf-99', 'utf-7x']) {
      const res = await createSite({ 'Content-Type': `application/json; charset=${charset}` }, json('Bad charset'));
      expect(res).toEqual({ status: 415, body: error(415, 'unsupported_media_type') });
    }
  });

  it('answers a malformed Content-Type header without a 5xx (read leniently as JSON, or refused in the error shape)', async () => {
    const types = ['application/json; charset', 'application/json; =utf-8', 'application/json;;', 'application/', 'application/json; charset="', 'application/json; charset=utf-8; charset=latin1'];
    for (const [i, type] of types.entries()) {
      const res = await createSite({ 'Content-Type': type }, json(`Malformed type ${i}`));
      expect({ type, status: res.status < 500 }).toEqual({ type, status: true });
      if (res.status >= 400) expect(res.body).toEqual(error(res.status, expect.any(String)));
    }
  });

  it('answers 413 to a compressed body that inflates past the 1 MB limit', async () => {
    const bomb = gzipSync(`{"orgId":"${orgA}","name":"${' '.repeat(2 * 1024 * 1024)}"}`);
    expect(bomb.length).toBeLessThan(16 * 1024);
    expect((await createSite({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, bomb))).toEqual({ status: 413, body: error(413, 'payload_too_large') });
  });

  it('still reads a well-formed compressed body', async () => {
    for (const [encoding, zip] of [['gzip', gzipSync], ['deflate', deflateSync], ['br', brotliCompressSync]] as const) {
      const res = await createSite({ 'Content-Type': 'application/json', 'Content-Encoding': encoding }, zip(json(`Compressed ${encoding}`)));
      expect(res.status).toBe(201);
    }
    const [row] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM sites WHERE org_id = $1 AND name LIKE 'Compressed %'`, [orgA]);
    expect(row.n).toBe(3);
  });

  it('answers 400 to an unpaired surrogate (text that is not Unicode), which a validator used to throw on (500)', async () => {
    const notUnicode = { ...error(400, 'validation_failed'), details: [{ field: 'body', message: expect.stringContaining('Unicode') }] };
    const login = await post('/api/v1/auth/login', { 'content-type': 'application/json' }, '{"email":"\\ud800@example.com","password":"x"}');
    expect(login).toEqual({ status: 400, body: notUnicode });
    const contact = await post('/api/v1/contacts', { authorization: admin, 'content-type': 'application/json' }, `{"orgId":"${orgA}","name":"x","email":"a\\udc00@b.example"}`);
    expect(contact).toEqual({ status: 400, body: notUnicode });
    const key = await createSite({ 'content-type': 'application/json' }, `{"orgId":"${orgA}","name":"Surrogate key","\\ud83d":1}`);
    expect(key).toEqual({ status: 400, body: notUnicode });
  });

  it('answers /health afterwards', async () => {
    await request(t.http).get('/api/v1/health').expect(200, { status: 'ok' });
  });
});
