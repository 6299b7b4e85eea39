import request from 'supertest';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { ERROR, GROUP, PATCH, scimClient, USER } from './scim.kit';


/**
 * SCIM 2.0 against real HTTP: the request sequences Microsoft Entra ID and Okta document for their
 * provisioning clients, deprovisioning that ends every credential at once, tenant isolation, token
 * revocation and rotation, RFC 7644 error shapes and group-to-role mapping. The principal cache
 * keeps callers for a minute here, so a refusal right after deactivation proves the revocation path.
 */
describe('SCIM provisioning', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  const domain = `${uniq('scim')}.example.com`;
  const domainB = `${uniq('scimb')}.example.com`;

  const admin = async (userId: string) => {
    const bearer = await t.token(userId, { mfa: true });
    return {
      get: (path: string) => request(t.http).get(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`),
      post: (path: string, body: object = {}) => request(t.http).post(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`).send(body),
      put: (path: string, body: object) => request(t.http).put(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`).send(body),
      delete: (path: string) => request(t.http).delete(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`),
    };
  };
  const scim = (token: string) => scimClient(t.http, token);
  const connection = async (userId: string, body: object) => {
    const res = await (await admin(userId)).post('/scim/connections', { name: 'IdP', ...body }).expect(201);
    return res.body as { token: string; connection: { id: string } };
  };
  const entraUser = (email: string, externalId: string) => ({
    schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId,
    userName: email,
    active: true,
    displayName: 'Ada Lovelace',
    emails: [{ primary: true, type: 'work', value: email }],
    name: { formatted: 'Ada Lovelace', familyName: 'Lovelace', givenName: 'Ada' },
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Ops' },
  });
  const expectScimError = (res: request.Response, status: number, scimType?: string) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(res.body.schemas).toEqual([ERROR]);
    expect(res.body.status).toBe(String(status));
    if (scimType) expect(res.body.scimType).toBe(scimType);
  };

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    ids = await t.seed(f);
    await ownerQuery(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now()), ($3, $4, 'y', true, now(), now(), now())`, [ids.orgA, domain, ids.orgB, domainB]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('replays the Entra ID sequence: lookup, create, update, deactivate with "False", and the user is out at once', async () => {
    const { token } = await connection(ids.adminA, { defaultRoleId: ids.readerRoleA });
    const c = scim(token);
    const email = `ada-${uniq()}@${domain}`;
    const lookup = await c.get(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`).expect(200);
    expect(lookup.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(lookup.body).toMatchObject({ totalResults: 0, Resources: [] });
    const created = await c.post('/Users', entraUser(email, 'entra-oid-1')).expect(201);
    expect(created.body).toMatchObject({ schemas: [USER], userName: email, externalId: 'entra-oid-1', active: true, emails: [{ value: email, type: 'work', primary: true }] });
    const userId = created.body.id as string;
    const [membership] = await ownerQuery<{ role_id: string }>(`SELECT role_id FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, userId]);
    expect(membership.role_id).toBe(ids.readerRoleA);

    const byExternal = await c.get(`/Users?filter=${encodeURIComponent('externalId eq "entra-oid-1"')}`).expect(200);
    expect(byExternal.body.Resources.map((r: { id: string }) => r.id)).toEqual([userId]);
    const byWorkEmail = await c.get(`/Users?filter=${encodeURIComponent(`emails[type eq "work"].value eq "${email.toUpperCase()}"`)}`).expect(200);
    expect(byWorkEmail.body.totalResults).toBe(1);

    await c.patch(`/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'displayName', value: 'Ada King' }, { op: 'Add', path: 'name.givenName', value: 'Ada' }] }).expect(200);
    expect((await c.get(`/Users/${userId}`).expect(200)).body.displayName).toBe('Ada King');

    const session = await t.token(userId);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${session}`).expect(200);
    const off = await c.patch(`/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }).expect(200);
    expect(off.body.active).toBe(false);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${session}`).expect(401);
    const login = await request(t.http).post('/api/v1/auth/login').send({ email, password: PASSWORD });
    expect(login.status).toBe(401);
  });

  it('replays the Okta sequence: paged lookup, create, path-less replace, PUT, and re-activation restores sign-in only', async () => {
    const { token } = await connection(ids.adminA, { defaultRoleId: ids.readerRoleA });
    const c = scim(token);
    const email = `grace-${uniq()}@${domain}`;
    const lookup = await c.get(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`).expect(200);
    expect(lookup.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0, startIndex: 1 });
    const created = await c
      .post('/Users', { schemas: [USER], userName: email, name: { givenName: 'Grace', familyName: 'Hopper' }, emails: [{ primary: true, value: email, type: 'work' }], displayName: 'Grace Hopper', locale: 'en-US', externalId: '00u1okta', groups: [], password: 'ignored-Password1', active: true })
      .expect(201);
    const userId = created.body.id as string;
    const session = await t.token(userId);
    await c.patch(`/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }).expect(200);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${session}`).expect(401);
    const put = await c.put(`/Users/${userId}`, { schemas: [USER], id: userId, userName: email, name: { givenName: 'Grace', familyName: 'Hopper' }, emails: [{ primary: true, value: email, type: 'work' }], active: true, externalId: '00u1okta' }).expect(200);
    expect(put.body.active).toBe(true);
    // The old session stays ended; a new sign-in works again.
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${session}`).expect(401);
    const fresh = await t.token(userId);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${fresh}`).expect(200);
    const page = await c.get('/Users?startIndex=1&count=1&attributes=userName').expect(200);
    expect(page.body.itemsPerPage).toBe(1);
    expect(Object.keys(page.body.Resources[0]).sort()).toEqual(['id', 'meta', 'schemas', 'userName']);
    const excluded = await c.get(`/Users/${userId}?excludedAttributes=emails,name`).expect(200);
    expect(excluded.body.emails).toBeUndefined();
    expect(excluded.body.userName).toBe(email);
  });

  it('deprovisioning ends sessions, refresh tokens, API keys, pending requests and approved elevations in one step', async () => {
    const { token } = await connection(ids.adminA, { defaultRoleId: ids.adminRoleA });
    const c = scim(token);
    const email = `leaver-${uniq()}@${domain}`;
    const userId = (await c.post('/Users', entraUser(email, `leaver-${uniq()}`)).expect(201)).body.id as string;
    const bearer = await t.token(userId, { mfa: true });
    await ownerQuery(`UPDATE users SET totp_secret = 'x' WHERE id = $1`, [userId]);
    const key = (await request(t.http).post('/api/v1/api-keys').set('Authorization', `Bearer ${bearer}`).send({ name: 'k', permissions: ['devices:read'] }).expect(201)).body.key as string;
    const [pending] = await ownerQuery<{ id: string }>(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_user_id, duration_minutes) VALUES ($1, $2, $3, 'tech_jit_admin', 'pending', $4, 30) RETURNING id`,
      [ids.orgA, ids.siteA1, ids.deviceA1, userId],
    );
    const [actuating] = await ownerQuery<{ id: string }>(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_user_id, approved_by, decided_at, expires_at, actuated_at, decision_source)
       VALUES ($1, $2, $3, 'tech_jit_admin', 'actuating', $4, $5, now(), now() + interval '30 minutes', now(), 'human') RETURNING id`,
      [ids.orgA, ids.siteA1, ids.deviceA1, ids.readerA, userId],
    );
    const [expiredApproval] = await ownerQuery<{ id: string }>(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_user_id, approved_by, decided_at, expires_at, decision_source)
       VALUES ($1, $2, $3, 'tech_jit_admin', 'approved', $4, $5, now() - interval '2 hours', now() - interval '1 hour', 'human') RETURNING id`,
      [ids.orgA, ids.siteA1, ids.deviceA1, ids.readerA, userId],
    );
    await request(t.http).get(`/api/v1/devices/${ids.deviceA1}`).set('Authorization', `Bearer ${key}`).expect(200);

    await c.delete(`/Users/${userId}`).expect(204);

    await request(t.http).get(`/api/v1/devices/${ids.deviceA1}`).set('Authorization', `Bearer ${key}`).expect(401);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${bearer}`).expect(401);
    const sessions = await ownerQuery<{ live: string; tokens: string }>(
      `SELECT count(*) FILTER (WHERE revoked_at IS NULL) AS live,
              (SELECT count(*) FROM refresh_tokens r WHERE r.user_id = $1 AND r.expires_at > now()) AS tokens
         FROM sessions WHERE user_id = $1`,
      [userId],
    );
    expect(sessions[0]).toEqual({ live: '0', tokens: '0' });
    const states = await ownerQuery<{ id: string; status: string }>(`SELECT id, status FROM elevation_requests WHERE id = ANY($1::uuid[])`, [[pending.id, actuating.id, expiredApproval.id]]);
    const status = Object.fromEntries(states.map((s) => [s.id, s.status]));
    expect(status).toEqual({ [pending.id]: 'revoked', [actuating.id]: 'revoked', [expiredApproval.id]: 'approved' });
    const commands = await ownerQuery(`SELECT 1 FROM device_commands WHERE elevation_request_id = $1 AND type = 'revoke_elevation' AND status = 'queued'`, [actuating.id]);
    expect(commands).toHaveLength(1);
    const [audit] = await ownerQuery<{ details: Record<string, number> }>(`SELECT details FROM audit_logs WHERE action = 'scim.user.deactivate' AND resource_id = $1`, [userId]);
    expect(audit.details).toMatchObject({ sessionsRevoked: 1, apiKeysRevoked: 1, pendingRequestsRevoked: 1, elevationsRevoked: 1, revokeCommandsQueued: 1 });
    // RFC 7644 §3.6: a deleted resource is gone for the client (the account and its suspended membership stay for the audit history).
    await c.get(`/Users/${userId}`).expect(404);
  });

  it('keeps tenants apart: a connection of organization B neither sees nor changes users of organization A', async () => {
    const a = scim((await connection(ids.adminA, { defaultRoleId: ids.readerRoleA })).token);
    const b = scim((await connection(ids.adminB, {})).token);
    const all = await b.get('/Users?count=100').expect(200);
    expect(all.body.Resources.map((r: { id: string }) => r.id)).not.toContain(ids.readerA);
    expectScimError(await b.get(`/Users/${ids.readerA}`), 404);
    expectScimError(await b.patch(`/Users/${ids.readerA}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }), 404);
    expectScimError(await b.delete(`/Users/${ids.readerA}`), 404);
    const found = await b.get(`/Users?filter=${encodeURIComponent(`userName eq "${f.emails.readerA}"`)}`).expect(200);
    expect(found.body.totalResults).toBe(0);
    await a.get(`/Users/${ids.readerA}`).expect(200);
    // Organization B cannot attach an address of A's verified domain either.
    expectScimError(await b.post('/Users', entraUser(`intruder-${uniq()}@${domain}`, 'x')), 400, 'invalidValue');
  });

  it('a partner connection updates technicians but never creates one', async () => {
    const p = scim((await connection(ids.tech, { ownerScope: 'partner' })).token);
    expectScimError(await p.post('/Users', entraUser(`new-tech-${uniq()}@${domain}`, 'x')), 404);
    const found = await p.get(`/Users?filter=${encodeURIComponent(`userName eq "${f.emails.techA}"`)}`).expect(200);
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([ids.techA]);
    await p.patch(`/Users/${ids.techA}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'externalId', value: 'okta-tech-a' }] }).expect(200);
    expectScimError(await p.get(`/Users/${ids.adminA}`), 404);
    // A technician limited to selected organizations cannot create a partner connection.
    const res = await (await admin(ids.techA)).post('/scim/connections', { name: 'x', ownerScope: 'partner' });
    expect(res.status).toBe(403);
  });

  it('refuses a revoked token and the old token of a rotated connection, in the SCIM error form', async () => {
    const created = await connection(ids.adminA, {});
    const c = scim(created.token);
    await c.get('/ServiceProviderConfig').expect(200);
    const rotated = await (await admin(ids.adminA)).post(`/scim/connections/${created.connection.id}/rotate`).expect(201);
    expectScimError(await c.get('/Users'), 401);
    await scim(rotated.body.token).get('/Users').expect(200);
    await (await admin(ids.adminA)).delete(`/scim/connections/${created.connection.id}`).expect(200);
    expectScimError(await scim(rotated.body.token).get('/Users'), 401);
    expectScimError(await scim('scim_forged').get('/Users'), 401);
    // A session token is no SCIM credential.
    expectScimError(await scim(await t.token(ids.adminA, { mfa: true })).get('/Users'), 401);
    const listed = await (await admin(ids.adminA)).get(`/scim/connections?orgId=${ids.orgA}`).expect(200);
    expect(JSON.stringify(listed.body)).not.toContain(rotated.body.token);
  });

  it('answers bad requests in RFC 7644 form with 400, 404 and 409', async () => {
    const c = scim((await connection(ids.adminA, { defaultRoleId: ids.readerRoleA })).token);
    expectScimError(await c.get(`/Users?filter=${encodeURIComponent('userName eq')}`), 400, 'invalidFilter');
    expectScimError(await c.get(`/Users?filter=${encodeURIComponent('password eq "x"')}`), 400, 'invalidFilter');
    const quoted = await c.get(`/Users?filter=${encodeURIComponent('userName eq "x\' OR 1=1 --"')}`).expect(200);
    expect(quoted.body.totalResults).toBe(0);
    expectScimError(await c.get('/Users/not-a-uuid'), 404);
    expectScimError(await c.get(`/Users/${ids.adminB}`), 404);
    expectScimError(await c.patch(`/Users/${ids.readerA}`, { schemas: [PATCH], Operations: [{ op: 'explode', path: 'active' }] }), 400, 'invalidSyntax');
    expectScimError(await c.patch(`/Users/${ids.readerA}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: 'maybe' }] }), 400, 'invalidValue');
    expectScimError(await c.post('/Users', { schemas: [USER] }), 400, 'invalidValue');
    expectScimError(await c.post('/Users', { userName: 'x@y.z' }), 400, 'invalidSyntax');
    expectScimError(await c.post('/Users', entraUser(f.emails.readerA, 'dup')), 409, 'uniqueness');
    expectScimError(await c.get('/Users?count=abc'), 400, 'invalidValue');
  });

  it('maps IdP groups to roles on group changes, and a removed group removes the role', async () => {
    const created = await connection(ids.adminA, { defaultRoleId: ids.readerRoleA });
    const c = scim(created.token);
    const a = await admin(ids.adminA);
    await a.put(`/scim/connections/${created.connection.id}/group-mappings`, { mappings: [{ group: 'RMM Admins', roleId: ids.adminRoleA, siteIds: [ids.siteA1] }] }).expect(200);
    const userId = (await c.post('/Users', entraUser(`member-${uniq()}@${domain}`, `m-${uniq()}`)).expect(201)).body.id as string;
    const role = async () => (await ownerQuery<{ role_id: string; site_restricted: boolean }>(`SELECT role_id, site_restricted FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, userId]))[0];
    const group = await c.post('/Groups', { schemas: [GROUP], displayName: 'RMM Admins', members: [] }).expect(201);
    await c.patch(`/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: userId }] }] }).expect(204);
    expect(await role()).toEqual({ role_id: ids.adminRoleA, site_restricted: true });
    const listed = await c.get(`/Groups?filter=${encodeURIComponent('displayName eq "RMM Admins"')}&excludedAttributes=members`).expect(200);
    expect(listed.body.Resources).toHaveLength(1);
    expect(listed.body.Resources[0].members).toBeUndefined();
    await c.patch(`/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: `members[value eq "${userId}"]` }] }).expect(204);
    expect(await role()).toEqual({ role_id: ids.readerRoleA, site_restricted: false });
    // A mapping to a role the configuring administrator cannot grant is refused when saved.
    const reader = await (await admin(ids.readerA));
    const denied = await reader.put(`/scim/connections/${created.connection.id}/group-mappings`, { mappings: [{ group: 'x', roleId: ids.adminRoleA }] });
    expect([403]).toContain(denied.status);
  });

  it('no request with a deprovisioned user\'s token succeeds once the deactivation has committed, with 20 in flight', async () => {
    const c = scim((await connection(ids.adminA, { defaultRoleId: ids.readerRoleA })).token);
    const userId = (await c.post('/Users', entraUser(`busy-${uniq()}@${domain}`, `b-${uniq()}`)).expect(201)).body.id as string;
    const bearer = await t.token(userId);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${bearer}`).expect(200);
    let committedAt = Infinity;
    const results: { sentAt: number; status: number }[] = [];
    const fire = async () => {
      const sentAt = performance.now();
      const res = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${bearer}`);
      results.push({ sentAt, status: res.status });
    };
    const inFlight = Array.from({ length: 20 }, () => fire());
    const deactivation = c.patch(`/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }).then((r) => {
      committedAt = performance.now();
      return r;
    });
    const after = deactivation.then(() => Promise.all(Array.from({ length: 20 }, () => fire())));
    await Promise.all([...inFlight, after]);
    expect((await deactivation).status).toBe(200);
    const late = results.filter((r) => r.sentAt >= committedAt);
    expect(late).toHaveLength(20);
    expect(late.every((r) => r.status === 401)).toBe(true);
    expect(results.every((r) => r.status === 200 || r.status === 401)).toBe(true);
  });
});
