import request from 'supertest';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

/**
 * The rule of acting on a person on the routes other than SCIM: revoking a key another person
 * created acts on that person, and an invitation is checked against its sender when it is
 * accepted, not only when it was sent.
 */
describe('the users API, API keys and invitations act on a person only within the actor’s authority', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  const domain = f.emails.adminA.split('@')[1];
  f.roles!.push({ key: 'keeperRoleA', scope: 'organization', organization: 'orgA', name: 'Key keeper', permissions: ['organizations:read', 'organizations:write', 'users:write'] });
  f.users!.push({ key: 'keeper', email: `keeper@${domain}`, name: 'Keeper', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'keeperRoleA' }] });
  const outsider = `outsider-${uniq()}@example.com`;
  f.users!.push({ key: 'outsider', email: outsider, name: 'Outsider', password: PASSWORD, memberships: [{ organization: 'orgB', role: 'adminRoleB' }] });

  const as = async (userId: string) => {
    const bearer = await t.token(userId, { mfa: true });
    const auth = (r: request.Test) => r.set('Authorization', `Bearer ${bearer}`);
    return {
      post: (path: string, body: object = {}) => auth(request(t.http).post(`/api/v1${path}`)).send(body),
      patch: (path: string, body: object) => auth(request(t.http).patch(`/api/v1${path}`)).send(body),
      delete: (path: string) => auth(request(t.http).delete(`/api/v1${path}`)),
      get: (path: string) => auth(request(t.http).get(`/api/v1${path}`)),
    };
  };

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '0' });
    ids = await t.seed(f);
    await ownerQuery(`UPDATE users SET totp_secret = 'x' WHERE id = ANY ($1::uuid[])`, [[ids.keeper, ids.adminA]]);
  });
  afterAll(async () => {
    await t.close();
  });

  it("refuses revoking the owner's API key to an administrator who does not cover the owner, and lets the owner's peer do it", async () => {
    const key = (await (await as(ids.adminA)).post('/api-keys', { name: `k-${uniq()}`, permissions: ['devices:read'] }).expect(201)).body.apiKey.id as string;
    const refused = await (await as(ids.keeper)).delete(`/api-keys/${key}`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('person_out_of_reach');
    expect((await ownerQuery<{ revoked_at: Date | null }>(`SELECT revoked_at FROM api_keys WHERE id = $1`, [key]))[0].revoked_at).toBeNull();
    await (await as(ids.tech)).delete(`/api-keys/${key}`).expect(200);
  });

  it("refuses changing or removing a membership that reaches further than the caller, with the rule's answer", async () => {
    const client = await as(ids.keeper);
    const change = await client.patch(`/users/${ids.adminA}/memberships/${ids.orgA}`, { roleId: ids.keeperRoleA });
    expect(change.status).toBe(403);
    expect((await client.delete(`/users/${ids.adminA}/memberships/${ids.orgA}`)).status).toBe(403);
    const [m] = await ownerQuery<{ role_id: string }>(`SELECT role_id FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.adminA]);
    expect(m.role_id).toBe(ids.adminRoleA);
  });

  it('refuses an invitation whose sender can no longer grant its role when it is accepted, and accepts it while they can', async () => {
    // The keeper invites a person of another tenant (an invitation, not a membership) with the keeper's own role...
    const admin = await as(ids.keeper);
    await admin.post('/users', { email: outsider, name: 'Outsider', orgId: ids.orgA, roleId: ids.keeperRoleA }).expect(201);
    const invitee = await as(ids.outsider);
    const [invitation] = (await invitee.get('/invitations').expect(200)).body.invitations as { id: string; orgId: string }[];
    expect(invitation.orgId).toBe(ids.orgA);
    // ...and is demoted before the person accepts.
    await ownerQuery(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.keeper, ids.readerRoleA]);
    const stale = await invitee.post(`/invitations/${invitation.id}/accept`);
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('invitation_stale');
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.outsider])).toHaveLength(0);
    await ownerQuery(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.keeper, ids.keeperRoleA]);
    await invitee.post(`/invitations/${invitation.id}/accept`).expect(200);
  });
});
