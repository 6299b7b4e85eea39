import request from 'supertest';
import { tenantFixture } from '../factories/tenant.factory';
import { startTestApp, TestApp } from '../support/test-app';

describe('cross-cutting behaviour of the API', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let tech: string;
  let reader: string;

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    tech = `Bearer ${await t.token(ids.tech)}`;
    reader = `Bearer ${await t.token(ids.readerA)}`;
  });
  afterAll(() => t.close());

  const errorShape = (status: number, code: string) => ({ success: false, statusCode: status, code, error: expect.any(String), requestId: expect.any(String) });

  it('answers malformed JSON with 400 invalid_json and no parser text', async () => {
    const res = await request(t.http).post('/api/v1/organizations').set('Authorization', tech).set('Content-Type', 'application/json').send('{"name": ').expect(400);
    expect(res.body).toEqual(errorShape(400, 'invalid_json'));
    expect(JSON.stringify(res.body)).not.toMatch(/Unexpected|JSON\.parse|position/);
  });

  it('rejects unknown body properties with validation details naming the field', async () => {
    const res = await request(t.http).post('/api/v1/organizations').set('Authorization', tech).send({ name: 'x', isAdmin: true }).expect(400);
    expect(res.body).toMatchObject({ ...errorShape(400, 'validation_failed'), details: [expect.objectContaining({ field: 'isAdmin' })] });
  });

  it('rejects a value of the wrong type', async () => {
    const res = await request(t.http).post('/api/v1/organizations').set('Authorization', tech).send({ name: 42 }).expect(400);
    expect(res.body.details[0].field).toBe('name');
  });

  it('accepts a 255-character name and rejects a 256-character one', async () => {
    await request(t.http).post('/api/v1/organizations').set('Authorization', tech).send({ name: 'n'.repeat(255) }).expect(201);
    const res = await request(t.http).post('/api/v1/organizations').set('Authorization', tech).send({ name: 'n'.repeat(256) }).expect(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('answers a path id that is not a UUID with 400 invalid_id', async () => {
    const res = await request(t.http).get('/api/v1/organizations/not-a-uuid').set('Authorization', tech).expect(400);
    expect(res.body).toEqual(errorShape(400, 'invalid_id'));
  });

  it('answers a body over the size cap with 413 and stores nothing', async () => {
    const res = await request(t.http).post('/api/v1/organizations').set('Authorization', tech).send({ name: 'x'.repeat(1_100_000) }).expect(413);
    expect(res.body).toEqual(errorShape(413, 'payload_too_large'));
  });

  it('answers a NUL byte that reaches the database with 400, not 500', async () => {
    const res = await request(t.http).get('/api/v1/audit-logs').query({ action: 'a\u0000b' }).set('Authorization', tech).expect(400);
    expect(res.body).toEqual(errorShape(400, 'invalid_input'));
  });

  it('answers an unknown route with 404 in the contract shape', async () => {
    const res = await request(t.http).get('/api/v1/no-such-route').expect(404);
    expect(res.body).toEqual(errorShape(404, 'not_found'));
  });

  it('answers a missing or malformed credential with 401', async () => {
    await request(t.http).get('/api/v1/organizations').expect(401);
    const res = await request(t.http).get('/api/v1/organizations').set('Authorization', 'Bearer nonsense').expect(401);
    expect(res.body).toEqual(errorShape(401, 'unauthenticated'));
  });

  it('denies a caller without the permission with 403 forbidden naming it', async () => {
    const res = await request(t.http).patch(`/api/v1/organizations/${ids.orgA}`).set('Authorization', reader).send({ name: 'renamed' }).expect(403);
    expect(res.body).toMatchObject({ ...errorShape(403, 'forbidden'), permission: 'organizations:write' });
  });

  it('requires a partner-scope session to create an organization', async () => {
    const admin = `Bearer ${await t.token(ids.adminA)}`;
    const res = await request(t.http).post('/api/v1/organizations').set('Authorization', admin).send({ name: 'nope' }).expect(403);
    expect(res.body.code).toBe('partner_scope_required');
  });

  it("answers another tenant's organization id with 404, not 403", async () => {
    const adminB = `Bearer ${await t.token(ids.adminB)}`;
    const res = await request(t.http).get(`/api/v1/organizations/${ids.orgA}`).set('Authorization', adminB).expect(404);
    expect(res.body.code).toBe('not_found');
    await request(t.http).patch(`/api/v1/organizations/${ids.orgA}`).set('Authorization', adminB).send({ name: 'hijack' }).expect(404);
  });

  it('lets a technician with selected organizations see only those', async () => {
    const techA = `Bearer ${await t.token(ids.techA)}`;
    const res = await request(t.http).get('/api/v1/organizations').set('Authorization', techA).expect(200);
    expect(res.body.organizations.map((o: { id: string }) => o.id)).toEqual([ids.orgA]);
  });

  it('echoes a safe X-Request-Id and generates one otherwise', async () => {
    const echoed = await request(t.http).get('/api/v1/health').set('X-Request-Id', 'abc-123').expect(200);
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const generated = await request(t.http).get('/api/v1/health').set('X-Request-Id', '<script>').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports liveness and database readiness', async () => {
    await request(t.http).get('/api/v1/health').expect(200, { status: 'ok' });
    const ready = await request(t.http).get('/api/v1/health/ready').expect(200);
    expect(ready.body.info.database.status).toBe('up');
  });

  it('publishes an OpenAPI document with security schemes, the error schema and request schemas', async () => {
    const res = await request(t.http).get('/api/docs-json').expect(200);
    expect(Object.keys(res.body.components.securitySchemes)).toEqual(expect.arrayContaining(['bearer', 'apiKey', 'agent']));
    expect(res.body.components.schemas.ErrorBody.required).toEqual(expect.arrayContaining(['code', 'error', 'requestId']));
    expect(res.body.paths['/api/v1/auth/login'].post.requestBody).toBeDefined();
    expect(res.body.components.schemas.LoginDto.properties.email).toBeDefined();
    await request(t.http).get('/api/docs').expect(200);
  });
});
