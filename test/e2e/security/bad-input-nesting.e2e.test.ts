import request from 'supertest';
import { startTestApp, type TestApp } from '../../support/test-app';
import { AgentKit, prompt } from '../agent/agent-kit';

/**
 * Issue 18, part 1: arrays nested about 1,300 deep (2.6 KB) or objects about 2,400 deep overflowed
 * the stack while the body was walked (ValidationPipe's prototype-key stripping), a 500 on every
 * authenticated write, the public auth routes and agent ingest. Bodies are bounded (depth 32, a
 * member count) before anything walks them: 400 validation_failed with a detail naming the body.
 */

const MAX_DEPTH = 32;

/** `depth` arrays, one inside the other: `[[[...]]]`. */
const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** `depth` objects, one inside the other: `{"a":{"a":...{}}}`. */
const objects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
/** A JSON body whose field `field` holds `nested`, beside the given valid fields. */
const withField = (fields: Record<string, unknown>, field: string, nested: string) =>
  JSON.stringify({ ...fields, [field]: '__NESTED__' }).replace('"__NESTED__"', nested);

const tooDeep = {
  success: false,
  statusCode: 400,
  code: 'validation_failed',
  error: expect.any(String),
  requestId: expect.any(String),
  details: [{ field: 'body', message: expect.stringContaining(`${MAX_DEPTH}`) }],
};

describe('attack: deeply nested JSON bodies', () => {
  let t: TestApp;
  let k: AgentKit;
  let ingest: string;
  let agentAuth: string;

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
    ingest = `/api/v1/agents/${k.agent('deviceA2').id}/elevation-requests`;
    agentAuth = `Bearer ${k.agent('deviceA2').token}`;
  });
  afterAll(() => t.close());

  const post = (path: string, body: string, authorization?: string) => {
    const r = request(t.http).post(path).set('Content-Type', 'application/json');
    return (authorization ? r.set('Authorization', authorization) : r).send(body);
  };

  describe('on agent ingest', () => {
    it('refuses arrays nested 1,300 deep (2.6 KB) with 400, not a stack overflow', async () => {
      const body = withField(prompt(), 'subject_username', arrays(1300));
      expect(Buffer.byteLength(body)).toBeLessThan(4 * 1024);
      const res = await post(ingest, body, agentAuth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
    });

    it('refuses objects nested 2,400 deep with 400', async () => {
      const res = await post(ingest, withField(prompt(), 'subject_username', objects(2400)), agentAuth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
    });

    it('refuses a bare top-level array nested 1,300 deep', async () => {
      const res = await post(ingest, arrays(1300), agentAuth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
    });

    it('reads a body exactly at the depth cap as usual (the field is refused by validation) and refuses one level more', async () => {
      // The body object is level 1, so the field holds MAX_DEPTH - 1 levels.
      const at = await post(ingest, withField(prompt(), 'subject_username', arrays(MAX_DEPTH - 1)), agentAuth);
      expect(at.status).toBe(400);
      expect(at.body.code).toBe('validation_failed');
      expect(at.body.details.map((d: { field: string }) => d.field)).toContain('subject_username');
      expect(at.body.details.map((d: { field: string }) => d.field)).not.toContain('body');
      const over = await post(ingest, withField(prompt(), 'subject_username', arrays(MAX_DEPTH)), agentAuth);
      expect({ status: over.status, body: over.body }).toEqual({ status: 400, body: tooDeep });
    });

    it('still records a normal prompt after the attacks', async () => {
      await post(ingest, JSON.stringify(prompt()), agentAuth).expect(201);
    });
  });

  describe('on the public sign-in route', () => {
    it('refuses arrays nested 1,300 deep in the email with 400', async () => {
      const res = await post('/api/v1/auth/login', withField({ password: 'x' }, 'email', arrays(1300)));
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
    });

    it('refuses objects nested 2,400 deep with 400', async () => {
      const res = await post('/api/v1/auth/login', objects(2400));
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
    });

    it('answers a body at the cap with the usual field errors and one level over with the body error', async () => {
      const at = await post('/api/v1/auth/login', withField({ password: 'x' }, 'email', objects(MAX_DEPTH - 1)));
      expect(at.status).toBe(400);
      expect(at.body.details.map((d: { field: string }) => d.field)).toContain('email');
      const over = await post('/api/v1/auth/login', withField({ password: 'x' }, 'email', objects(MAX_DEPTH)));
      expect({ status: over.status, body: over.body }).toEqual({ status: 400, body: tooDeep });
    });
  });

  describe('on an authenticated write', () => {
    it('refuses arrays nested 1,300 deep and objects nested 2,400 deep when creating a site', async () => {
      for (const nested of [arrays(1300), objects(2400)]) {
        const res = await post('/api/v1/sites', withField({ orgId: k.ids.orgA }, 'name', nested), k.admin.adminA);
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
      }
    });

    it('refuses a body with more members than the cap, however flat', async () => {
      const flat = JSON.stringify({ name: 'Flat', orgId: k.ids.orgA, tags: Array.from({ length: 20_001 }, () => 0) });
      const res = await post('/api/v1/sites', flat, k.admin.adminA);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(expect.objectContaining({ code: 'validation_failed', details: [{ field: 'body', message: expect.stringMatching(/members/) }] }));
    });

    it('refuses arrays where a list of objects belongs (a contact phone, a script parameter) instead of crashing on them', async () => {
      for (const [path, body] of [
        ['/api/v1/contacts', { name: 'Nested phones', phones: '__NESTED__' }],
        ['/api/v1/scripts', { name: 'Nested parameters', language: 'powershell', body: 'Write-Output 1', parameters: '__NESTED__' }],
      ] as const) {
        for (const nested of ['[[]]', arrays(MAX_DEPTH - 1)]) {
          const res = await post(path, JSON.stringify(body).replace('"__NESTED__"', nested), k.admin.adminA);
          const field = Object.keys(body).find((f) => body[f as keyof typeof body] === '__NESTED__')!;
          const fields = (res.body.details ?? []).map((d: { field: string }) => d.field.split('.')[0]);
          expect({ path, status: res.status, code: res.body.code, field: fields.includes(field) }).toEqual({ path, status: 400, code: 'validation_failed', field: true });
        }
      }
    });

    it('refuses a deep structure in a free-form field (policy features) at one over the cap', async () => {
      const res = await post('/api/v1/policies', withField({ name: 'Deep', type: 'patch', orgId: k.ids.orgA }, 'features', objects(MAX_DEPTH)), k.admin.adminA);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooDeep });
    });
  });

  it('answers /health afterwards', async () => {
    await request(t.http).get('/api/v1/health').expect(200, { status: 'ok' });
  });
});
