import request from 'supertest';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { ERROR, GROUP, PATCH, scimClient, USER } from './scim.kit';

/**
 * The points a SCIM compliance tester checks (RFC 7643, 7644), each asserted as the RFC states
 * it, not as the service happens to answer: Location and ETag headers, WWW-Authenticate, name
 * parts kept, lastModified and versions, count=0, read-only attributes, SCIM errors everywhere
 * under the base, deletion that truly hides a user and lets it be provisioned again, and the
 * discovery endpoints by id. And a leaver's own open elevation ends with their deprovisioning.
 */
describe('SCIM conformance', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let c: ReturnType<typeof scimClient>;
  let base: string;
  const f = tenantFixture();
  const domain = `${uniq('conf')}.example.com`;

  const user = (email: string, extra: object = {}) => ({
    schemas: [USER],
    userName: email,
    name: { givenName: 'Grace', familyName: 'Hopper' },
    emails: [{ value: email, type: 'work', primary: true }],
    active: true,
    ...extra,
  });
  const newUser = async (extra: object = {}) => (await c.post('/Users', user(`${uniq('u')}@${domain}`, extra)).expect(201)).body as { id: string; userName: string; meta: Record<string, string> };
  const expectScimError = (res: request.Response, status: number, scimType?: string) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(res.body).toMatchObject({ schemas: [ERROR], status: String(status) });
    if (scimType) expect(res.body.scimType).toBe(scimType);
  };

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '0' });
    ids = await t.seed(f);
    await ownerQuery(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now())`, [ids.orgA, domain]);
    const bearer = await t.token(ids.adminA, { mfa: true });
    const made = await request(t.http).post('/api/v1/scim/connections').set('Authorization', `Bearer ${bearer}`).send({ name: 'Conformance', defaultRoleId: ids.readerRoleA }).expect(201);
    c = scimClient(t.http, made.body.token);
    base = made.body.connection.baseUrl as string;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers POST /Users and /Groups 201 with Location equal to meta.location, and an ETag equal to meta.version (§3.3, §3.14)', async () => {
    const res = await c.post('/Users', user(`${uniq('loc')}@${domain}`)).expect(201);
    expect(res.headers.location).toBe(res.body.meta.location);
    expect(res.headers.location).toBe(`${base}/Users/${res.body.id}`);
    expect(res.headers.etag).toBe(res.body.meta.version);
    const group = await c.post('/Groups', { schemas: [GROUP], displayName: `G ${uniq()}` }).expect(201);
    expect(group.headers.location).toBe(group.body.meta.location);
  });

  it('answers 401 with WWW-Authenticate naming the Bearer scheme (§2)', async () => {
    const res = await request(t.http).get('/api/v1/scim/v2/Users');
    expectScimError(res, 401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
    const wrong = await request(t.http).get('/api/v1/scim/v2/Users').set('Authorization', 'Bearer scim_not-a-token');
    expect(wrong.headers['www-authenticate']).toMatch(/^Bearer\b/);
  });

  it('keeps name.givenName and name.familyName as sent (RFC 7643 §4.1.1)', async () => {
    const created = await newUser({ name: { givenName: 'Grace', familyName: 'Hopper', formatted: 'Grace B. Hopper' } });
    const read = (await c.get(`/Users/${created.id}`).expect(200)).body;
    expect(read.name).toEqual({ givenName: 'Grace', familyName: 'Hopper', formatted: 'Grace B. Hopper' });
    await c.patch(`/Users/${created.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'name.familyName', value: 'Murray' }] }).expect(200);
    expect((await c.get(`/Users/${created.id}`).expect(200)).body.name.familyName).toBe('Murray');
  });

  it('moves meta.lastModified and the version on deactivation, and honours If-Match (RFC 7643 §3.1, RFC 7644 §3.14)', async () => {
    const created = await newUser();
    await new Promise((r) => setTimeout(r, 5));
    const off = await c.patch(`/Users/${created.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }).expect(200);
    expect(Date.parse(off.body.meta.lastModified)).toBeGreaterThan(Date.parse(created.meta.lastModified));
    expect(off.body.meta.version).not.toBe(created.meta.version);
    const stale = await c.patch(`/Users/${created.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Stale' }] }).set('If-Match', created.meta.version);
    expectScimError(stale, 412);
    expect((await c.get(`/Users/${created.id}`).expect(200)).body.displayName).not.toBe('Stale');
    const fresh = await c.patch(`/Users/${created.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Fresh' }] }).set('If-Match', off.body.meta.version);
    expect(fresh.status).toBe(200);
    expectScimError(await c.delete(`/Users/${created.id}`).set('If-Match', off.body.meta.version), 412);
    expect((await c.get('/ServiceProviderConfig').expect(200)).body.etag).toEqual({ supported: true });
  });

  it('answers count=0 with no resources and the real total, a negative count as 0 (§3.4.2.4)', async () => {
    await newUser();
    const total = (await c.get('/Users').expect(200)).body.totalResults as number;
    expect(total).toBeGreaterThan(0);
    for (const count of ['0', '-5']) {
      const res = await c.get(`/Users?count=${count}`).expect(200);
      expect(res.body).toMatchObject({ totalResults: total, itemsPerPage: 0, Resources: [] });
    }
    const groups = (await c.get('/Groups?count=0').expect(200)).body;
    expect(groups.totalResults).toBe((await c.get('/Groups').expect(200)).body.totalResults);
    expect(groups.Resources).toEqual([]);
  });

  it('refuses a PATCH of a read-only attribute with 400 mutability (§3.5.2)', async () => {
    const created = await newUser();
    for (const op of [{ op: 'replace', path: 'id', value: 'x' }, { op: 'replace', path: 'meta.created', value: '2000-01-01T00:00:00Z' }, { op: 'replace', value: { id: 'x' } }]) {
      expectScimError(await c.patch(`/Users/${created.id}`, { schemas: [PATCH], Operations: [op] }), 400, 'mutability');
    }
    const group = (await c.post('/Groups', { schemas: [GROUP], displayName: `RO ${uniq()}` }).expect(201)).body;
    expectScimError(await c.patch(`/Groups/${group.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'meta.lastModified', value: 'x' }] }), 400, 'mutability');
  });

  it('answers every path under the base as SCIM: /Me and /Bulk 501, an unknown path 404 (§3.11, §3.7, §3.12)', async () => {
    expectScimError(await c.get('/Me'), 501);
    expectScimError(await c.post('/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'], Operations: [] }), 501);
    expectScimError(await c.get('/Nothing/here'), 404);
    expectScimError(await c.get('/Users/not-an-id'), 404);
  });

  it('hides a deleted user from every operation and query, and re-provisions it when POSTed again (§3.6)', async () => {
    const email = `${uniq('del')}@${domain}`;
    const created = (await c.post('/Users', user(email, { externalId: 'ext-del' })).expect(201)).body;
    await c.delete(`/Users/${created.id}`).expect(204);
    expectScimError(await c.get(`/Users/${created.id}`), 404);
    expectScimError(await c.delete(`/Users/${created.id}`), 404);
    expectScimError(await c.patch(`/Users/${created.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] }), 404);
    expectScimError(await c.put(`/Users/${created.id}`, user(email)), 404);
    const lookup = await c.get(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`).expect(200);
    expect(lookup.body.totalResults).toBe(0);
    expect((await c.get(`/Users?filter=${encodeURIComponent('externalId eq "ext-del"')}`).expect(200)).body.totalResults).toBe(0);
    expect((await request(t.http).post('/api/v1/auth/login').send({ email, password: PASSWORD })).status).toBe(401);
    // Entra ID restores a user by looking it up, finding none, and POSTing it again.
    const again = await c.post('/Users', user(email, { externalId: 'ext-del-2' })).expect(201);
    expect(again.body).toMatchObject({ id: created.id, userName: email, active: true, externalId: 'ext-del-2' });
    expect((await c.get(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`).expect(200)).body.totalResults).toBe(1);
  });

  it('answers the discovery endpoints by id, each with meta.location, and lists the enterprise extension (§4)', async () => {
    const types = (await c.get('/ResourceTypes').expect(200)).body.Resources as { id: string; meta: { location: string }; schemaExtensions?: unknown[] }[];
    for (const type of types) {
      expect(type.meta.location).toBe(`${base}/ResourceTypes/${type.id}`);
      expect((await c.get(`/ResourceTypes/${type.id}`).expect(200)).body).toEqual(type);
    }
    expect(types.find((r) => r.id === 'User')!.schemaExtensions).toEqual([{ schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', required: false }]);
    const schemas = (await c.get('/Schemas').expect(200)).body.Resources as { id: string; meta: { location: string } }[];
    expect(schemas.map((s) => s.id)).toEqual(expect.arrayContaining([USER, GROUP, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User']));
    for (const schema of schemas) {
      expect(schema.meta.location).toBe(`${base}/Schemas/${schema.id}`);
      expect((await c.get(`/Schemas/${schema.id}`).expect(200)).body).toEqual(schema);
    }
    expectScimError(await c.get('/Schemas/urn:nothing'), 404);
    expectScimError(await c.get('/ResourceTypes/Nothing'), 404);
  });

  it("ends the leaver's own approved JIT window with deprovisioning, queues the revoke to the agent and audits it", async () => {
    const leaver = await newUser();
    // A JIT admin window the leaver filed for themself, approved by the administrator and applied on the device.
    const [elevation] = await ownerQuery<{ id: string }>(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_user_id, approved_by, decided_at, expires_at, actuated_at, decision_source)
       VALUES ($1, $2, $3, 'tech_jit_admin', 'actuating', $4, $5, now(), now() + interval '1 hour', now(), 'human') RETURNING id`,
      [ids.orgA, ids.siteA1, ids.deviceA1, leaver.id, ids.adminA],
    );
    await c.patch(`/Users/${leaver.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: 'False' }] }).expect(200);
    const [ended] = await ownerQuery<{ status: string; revoke_reason: string }>(`SELECT status, revoke_reason FROM elevation_requests WHERE id = $1`, [elevation.id]);
    expect(ended).toEqual({ status: 'revoked', revoke_reason: 'filer_deprovisioned' });
    const commands = await ownerQuery<{ type: string }>(`SELECT type FROM device_commands WHERE elevation_request_id = $1`, [elevation.id]);
    expect(commands.map((x) => x.type)).toContain('revoke_elevation');
    const audit = await ownerQuery<{ details: { reason: string } }>(`SELECT details FROM audit_logs WHERE action = 'pam.elevation.revoke' AND resource_id = $1`, [elevation.id]);
    expect(audit.map((a) => a.details.reason)).toEqual(['filer_deprovisioned']);
    const [deactivation] = await ownerQuery<{ details: { elevationsRevoked: number } }>(`SELECT details FROM audit_logs WHERE action = 'scim.user.deactivate' AND resource_id = $1`, [leaver.id]);
    expect(deactivation.details.elevationsRevoked).toBe(1);
  });

  it('answers a group PATCH without the member list, 204, unless attributes asks for it (§3.5.2)', async () => {
    const member = await newUser();
    const group = (await c.post('/Groups', { schemas: [GROUP], displayName: `P ${uniq()}` }).expect(201)).body;
    const plain = await c.patch(`/Groups/${group.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: member.id }] }] });
    expect(plain.status).toBe(204);
    expect(plain.text).toBe('');
    const asked = await c.patch(`/Groups/${group.id}?attributes=members`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: `P2 ${uniq()}` }] }).expect(200);
    expect(asked.body.members.map((m: { value: string }) => m.value)).toEqual([member.id]);
    expectScimError(await c.patch(`/Groups/${group.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: ids.adminB }] }] }), 400, 'invalidValue');
  });
});
