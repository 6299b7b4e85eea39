import request from 'supertest';
import { tenantFixture, PASSWORD, TOTP_SECRET, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

/**
 * Security review, finding 4: an API key kept working after its creator was disabled and lost
 * his membership. A key acts for the person who made it: it lives only while that person is
 * active and still holds every permission it carries, reaches no site they cannot, and the
 * principal cache forgets it with them. The app keeps resolved callers for a minute here, so the
 * tests also show that the revocation path of the cache covers keys.
 */
describe('an API key dies with its creator', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  f.roles!.push({ key: 'opsRoleA', scope: 'organization', organization: 'orgA', name: 'Ops', permissions: ['devices:read', 'devices:write', 'organizations:write'] });
  const creators = ['ops', 'leaver', 'shrinking', 'restricted'] as const;
  for (const who of creators) {
    f.users!.push({
      key: who,
      email: `${who}-${uniq()}@example.com`,
      name: who,
      password: PASSWORD,
      totpSecret: TOTP_SECRET,
      memberships: [{ organization: 'orgA', role: 'opsRoleA' }],
    });
  }
  f.users!.push({ key: 'allTech', email: `all-${uniq()}@example.com`, name: 'All', password: PASSWORD, totpSecret: TOTP_SECRET, partnerMembership: { partner: 'partner', role: 'techRole', orgAccess: 'all' } });

  const api = (bearer: string) => ({
    get: (path: string) => request(t.http).get(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`),
    post: (path: string, body: object = {}) => request(t.http).post(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`).send(body),
    patch: (path: string, body: object) => request(t.http).patch(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`).send(body),
    delete: (path: string) => request(t.http).delete(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`),
  });
  const session = async (userId: string) => api(await t.token(userId, { mfa: true }));
  const keyOf = async (userId: string, body: object = {}) =>
    (await (await session(userId)).post('/api-keys', { name: 'Automation', permissions: ['devices:read'], ...body }).expect(201)).body;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    ids = await t.seed(f);
  });
  afterAll(async () => {
    await t.close();
  });

  it('stops working once its creator is disabled and removed from the organization', async () => {
    const { key } = await keyOf(ids.leaver);
    await api(key).get(`/devices/${ids.deviceA1}`).expect(200);
    await (await session(ids.adminA)).delete(`/users/${ids.leaver}/memberships/${ids.orgA}`).expect(200);
    await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [ids.leaver]);
    const res = await api(key).get(`/devices/${ids.deviceA1}`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
  });

  it('stops working while its creator is disabled, even with the membership intact', async () => {
    const { key } = await keyOf(ids.ops);
    await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [ids.ops]);
    try {
      // Never used before, so nothing is cached: this is the resolution itself refusing.
      const fresh = await ownerQuery<{ id: string }>(`SELECT id FROM api_keys WHERE created_by = $1`, [ids.ops]);
      expect(fresh).toHaveLength(1);
      await api(key).get(`/devices/${ids.deviceA1}`).expect(401);
    } finally {
      await ownerQuery(`UPDATE users SET status = 'active' WHERE id = $1`, [ids.ops]);
    }
  });

  it('stops working when its creator no longer holds a permission the key carries', async () => {
    const { key } = await keyOf(ids.shrinking, { permissions: ['devices:read', 'devices:write'] });
    await api(key).get(`/devices/${ids.deviceA1}`).expect(200);
    await (await session(ids.adminA)).patch(`/users/${ids.shrinking}/memberships/${ids.orgA}`, { roleId: ids.readerRoleA }).expect(200);
    await api(key).get(`/devices/${ids.deviceA1}`).expect(401);
  });

  it("reaches no site its creator has since been restricted away from", async () => {
    const { key } = await keyOf(ids.restricted);
    await api(key).get(`/devices/${ids.deviceA2}`).expect(200);
    await (await session(ids.adminA)).patch(`/users/${ids.restricted}/memberships/${ids.orgA}`, { siteIds: [ids.siteA1] }).expect(200);
    await api(key).get(`/devices/${ids.deviceA1}`).expect(200);
    const other = await api(key).get(`/devices/${ids.deviceA2}`);
    expect([403, 404]).toContain(other.status);
  });

  it('loses a partner-wide reach when its creator is narrowed to selected organizations', async () => {
    const { key } = await keyOf(ids.allTech);
    await api(key).get(`/devices/${ids.deviceB1}`).expect(200);
    await ownerQuery(`UPDATE partner_memberships SET org_access = 'selected' WHERE user_id = $1`, [ids.allTech]);
    await ownerQuery(`INSERT INTO partner_membership_orgs (partner_id, user_id, org_id) VALUES ($1, $2, $3)`, [ids.partner, ids.allTech, ids.orgA]);
    // The change was made behind the service's back: the cached principal lasts its minute, and
    // the next resolution (a restarted instance here) refuses the key.
    const fresh = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '0' });
    try {
      const res = await request(fresh.http).get(`/api/v1/devices/${ids.deviceA1}`).set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(401);
    } finally {
      await fresh.close();
    }
  });

  it('passes MFA-gated routes only while its creator still has MFA', async () => {
    const { key } = await keyOf(ids.adminA, { permissions: ['devices:write'], mfaSatisfied: true });
    await ownerQuery(`UPDATE users SET totp_secret = NULL WHERE id = $1`, [ids.adminA]);
    try {
      const fresh = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '0' });
      try {
        const res = await request(fresh.http).post(`/api/v1/devices/${ids.deviceA1}/enroll`).set('Authorization', `Bearer ${key}`);
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('mfa_required');
      } finally {
        await fresh.close();
      }
    } finally {
      await ownerQuery(`UPDATE users SET totp_secret = (SELECT totp_secret FROM users WHERE id = $2) WHERE id = $1`, [ids.adminA, ids.ops]);
    }
  });

  it('names both the person and the key in the audit trail of what the key did', async () => {
    const created = await keyOf(ids.ops, { permissions: ['devices:write', 'organizations:write'], mfaSatisfied: true });
    await api(created.key).post(`/devices/${ids.deviceA2}/enroll`).expect(201);
    const [row] = await ownerQuery<{ actor_type: string; actor_id: string; actor_user_id: string }>(
      `SELECT actor_type, actor_id, actor_user_id FROM audit_logs WHERE actor_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [created.apiKey.id],
    );
    expect(row).toEqual({ actor_type: 'api_key', actor_id: created.apiKey.id, actor_user_id: ids.ops });
    const listed = await (await session(ids.adminA)).get(`/audit-logs?actorUserId=${ids.ops}&actorType=api_key`).expect(200);
    expect(listed.body.auditLogs[0]).toMatchObject({ actorType: 'api_key', actorId: created.apiKey.id, actorUserId: ids.ops });
  });
});
