import request from 'supertest';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery } from '../../support/test-app';
import { Caller, expectError, startTenancyWorld, TenancyWorld } from '../tenancy/tenancy-e2e.util';

/**
 * Issue 13, item 10b: POST /users answered 409 email_taken for an email held in another tenant,
 * so an organization admin learned who has an account elsewhere. Users are global identities
 * (one per email): adding an email held out of the caller's sight now records an invitation that
 * the person accepts signed in as themselves, and the caller's answer and later reads are the
 * same as for a new email. Nothing about the existing identity changes, and nothing of it is shown.
 */
describe('attack: learning which emails have accounts in other tenants through user creation', () => {
  let w: TenancyWorld;
  let other: { ids: Record<string, string>; emails: Record<string, string> };
  let third: { ids: Record<string, string>; emails: Record<string, string> };
  let otherAdmin: Caller;

  beforeAll(async () => {
    w = await startTenancyWorld();
    const fx = tenantFixture();
    other = { ids: await w.t.seed(fx), emails: fx.emails };
    const fx3 = tenantFixture();
    third = { ids: await w.t.seed(fx3), emails: fx3.emails };
    otherAdmin = await w.session(other.ids.adminA);
  }, 60_000);
  afterAll(() => w.t.close());

  const fresh = () => `fresh-${uniq('u')}@example.org`;
  const body = (email: string, extra: object = {}) => ({ email, name: 'Chosen Name', password: 'a-password-of-mine', roleId: w.ids.readerRoleA, ...extra });

  /** The answer with every value that differs between any two creations (ids, times) blanked. */
  function shape(res: request.Response) {
    const u = res.body.user;
    return {
      status: res.status,
      keys: Object.keys(res.body).sort(),
      user: { ...u, id: typeof u.id, email: u.email.replace(/^.*@/, '@'), createdAt: typeof u.createdAt, updatedAt: typeof u.updatedAt, memberships: u.memberships.map((m: object) => ({ ...m, createdAt: '' })) },
    };
  }

  it('answers an email held in another partner exactly as a new one: 201 with only what the caller wrote', async () => {
    const newOne = await w.as.adminA.post('/users', body(fresh()));
    const foreignEmail = other.emails.adminB;
    const held = await w.as.adminA.post('/users', body(foreignEmail));
    expect(held.status).toBe(201);
    expect(shape(held)).toEqual({ ...shape(newOne), user: { ...shape(newOne).user, email: shape(held).user.email } });
    expect(held.body.user).toMatchObject({ name: 'Chosen Name', status: 'active', mfaEnabled: false, partnerMembership: null });
    expect(held.body.user.memberships).toEqual([{ orgId: w.ids.orgA, roleId: w.ids.readerRoleA, siteIds: null, createdAt: expect.any(String) }]);
    expect(JSON.stringify(held.body)).not.toMatch(/Admin B|argon2/);
  });

  it('answers an email held in another organization of the same partner the same way', async () => {
    const res = await w.as.adminA.post('/users', body(w.f.emails.adminB.toUpperCase()));
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ name: 'Chosen Name', mfaEnabled: false });
    expect(res.body.user.memberships.map((m: { orgId: string }) => m.orgId)).toEqual([w.ids.orgA]);
  });

  it('shows the added user in later reads as it would a new one, from what the caller wrote', async () => {
    const email = other.emails.readerA;
    const created = await w.as.adminA.post('/users', body(email, { name: 'My Label' })).expect(201);
    const id = created.body.user.id;
    const got = await w.as.adminA.get(`/users/${id}`).expect(200);
    expect(got.body.user).toEqual(created.body.user);
    const listed = await w.as.adminA.get(`/users?search=${encodeURIComponent(email)}`).expect(200);
    expect(listed.body.users).toEqual([created.body.user]);
    expect(listed.body.pagination.total).toBe(1);
    expectError(await w.as.adminA.post('/users', body(email)), 409, 'email_taken');
  });

  it('never touches the existing identity: no password, name, status or membership of the caller reaches it', async () => {
    const email = other.emails.siteA1;
    const [before] = await ownerQuery(`SELECT name, password_hash, status, updated_at FROM users WHERE id = $1`, [other.ids.siteA1User]);
    await w.as.adminA.post('/users', body(email, { name: 'Renamed By Attacker', password: 'attacker-chosen-pw' })).expect(201);
    const [after] = await ownerQuery(`SELECT name, password_hash, status, updated_at FROM users WHERE id = $1`, [other.ids.siteA1User]);
    expect(after).toEqual(before);
    expect(await ownerQuery(`SELECT org_id FROM organization_memberships WHERE user_id = $1`, [other.ids.siteA1User])).toEqual([{ org_id: other.ids.orgA }]);
    await request(w.t.http).post('/api/v1/auth/login').send({ email, password: 'attacker-chosen-pw' }).expect(401);
    await request(w.t.http).post('/api/v1/auth/login').send({ email, password: PASSWORD }).expect(200);
  });

  it('lets the caller manage the added membership as any other, and keeps a role it grants in use', async () => {
    const created = await w.as.adminA.post('/users', body(other.emails.tech)).expect(201);
    const id = created.body.user.id;
    const patched = await w.as.adminA.patch(`/users/${id}/memberships/${w.ids.orgA}`, { siteIds: [w.ids.siteA1] }).expect(200);
    expect(patched.body.user.memberships).toEqual([expect.objectContaining({ orgId: w.ids.orgA, siteIds: [w.ids.siteA1] })]);
    const role = await w.as.adminA.post('/roles', { name: `Temp ${uniq()}`, permissions: ['devices:read'] }).expect(201);
    await w.as.adminA.patch(`/users/${id}/memberships/${w.ids.orgA}`, { roleId: role.body.role.id }).expect(200);
    expectError(await w.as.adminA.delete(`/roles/${role.body.role.id}`), 409, 'role_in_use');
    expect((await w.as.adminA.delete(`/users/${id}/memberships/${w.ids.orgA}`).expect(200)).body).toEqual({ success: true });
    expectError(await w.as.adminA.get(`/users/${id}`), 404, 'not_found');
  });

  it('still answers 409 email_taken for a user the caller already sees in its own tenant', async () => {
    expectError(await w.as.adminA.post('/users', body(w.f.emails.readerA.toUpperCase())), 409, 'email_taken');
    expectError(await w.as.tech.post('/users', body(w.f.emails.adminB, { orgId: w.ids.orgA })), 409, 'email_taken');
  });

  it('answers a technician adding an out-of-reach email as a new technician the same way', async () => {
    const techBody = (email: string) => ({ email, name: 'Tech Label', password: PASSWORD, roleId: w.ids.techRole, orgAccess: 'selected', orgIds: [w.ids.orgA] });
    const newOne = await w.as.techA.post('/partner-memberships', techBody(fresh())).expect(201);
    for (const email of [third.emails.adminA, third.emails.tech]) {
      const held = await w.as.techA.post('/partner-memberships', techBody(email)).expect(201);
      expect(held.body.user).toMatchObject({ name: 'Tech Label', mfaEnabled: false, memberships: [] });
      expect(held.body.user.partnerMembership).toEqual({ ...newOne.body.user.partnerMembership, createdAt: expect.any(String) });
    }
    // The second is a technician of another partner: neither refused nor made one of this partner.
    expect(await ownerQuery(`SELECT partner_id FROM partner_memberships WHERE user_id IN ($1, $2)`, [third.ids.adminA, third.ids.tech])).toEqual([{ partner_id: third.ids.partner }]);
  });

  it('gives the existing user the choice: the invitation is theirs to accept or decline, signed in as themselves', async () => {
    const created = await w.as.adminA.post('/users', body(other.emails.techA, { name: 'Label' })).expect(201);
    const invitee = await w.session(other.ids.techA);
    const listed = await invitee.get('/invitations').expect(200);
    const invitation = listed.body.invitations.find((i: { orgId: string }) => i.orgId === w.ids.orgA);
    expect(invitation).toMatchObject({ orgId: w.ids.orgA, partnerId: null, organizationName: expect.any(String) });
    expectError(await otherAdmin.post(`/invitations/${invitation.id}/accept`), 404, 'not_found');
    await invitee.post(`/invitations/${invitation.id}/accept`).expect(200);
    expect(await ownerQuery(`SELECT role_id FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [w.ids.orgA, other.ids.techA])).toEqual([{ role_id: w.ids.readerRoleA }]);
    const seen = await w.as.adminA.get(`/users/${created.body.user.id}`).expect(200);
    expect(seen.body.user).toMatchObject({ name: 'Tech A', memberships: [expect.objectContaining({ orgId: w.ids.orgA })] });

    await w.as.adminA.post('/users', body(other.emails.adminA)).expect(201);
    const declining = (await otherAdmin.get('/invitations').expect(200)).body.invitations[0];
    await otherAdmin.delete(`/invitations/${declining.id}`).expect(200);
    expect(await ownerQuery(`SELECT 1 FROM membership_invitations WHERE id = $1`, [declining.id])).toEqual([]);
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [w.ids.orgA, other.ids.adminA])).toEqual([]);
  });

  it('lets the invitee accept a technician invitation, joining with the organizations and sites it names', async () => {
    const techBody = { email: third.emails.readerA, name: 'Label', roleId: w.ids.techRole, orgAccess: 'selected', orgIds: [w.ids.orgA], siteIds: [w.ids.siteA1] };
    const created = await w.as.tech.post('/partner-memberships', techBody).expect(201);
    expect(await ownerQuery(`SELECT 1 FROM partner_memberships WHERE user_id = $1`, [third.ids.readerA])).toEqual([]);
    const invitee = await w.session(third.ids.readerA);
    const invitation = (await invitee.get('/invitations').expect(200)).body.invitations.find((i: { partnerId: string | null }) => i.partnerId === w.ids.partner);
    expect(invitation).toMatchObject({ orgId: null, organizationName: null, partnerId: w.ids.partner, partnerName: expect.any(String) });
    await invitee.post(`/invitations/${invitation.id}/accept`).expect(200);
    expect(await ownerQuery(`SELECT partner_id, role_id, org_access, site_restricted FROM partner_memberships WHERE user_id = $1`, [third.ids.readerA])).toEqual([
      { partner_id: w.ids.partner, role_id: w.ids.techRole, org_access: 'selected', site_restricted: true },
    ]);
    expect(await ownerQuery(`SELECT org_id FROM partner_membership_orgs WHERE user_id = $1`, [third.ids.readerA])).toEqual([{ org_id: w.ids.orgA }]);
    expect(await ownerQuery(`SELECT org_id, site_id FROM partner_membership_sites WHERE user_id = $1`, [third.ids.readerA])).toEqual([{ org_id: w.ids.orgA, site_id: w.ids.siteA1 }]);
    expect(await ownerQuery(`SELECT 1 FROM membership_invitations WHERE id = $1`, [invitation.id])).toEqual([]);
    const seen = await w.as.tech.get(`/users/${created.body.user.id}`).expect(200);
    expect(seen.body.user.partnerMembership).toMatchObject({ partnerId: w.ids.partner, orgAccess: 'selected', orgIds: [w.ids.orgA], siteIds: [w.ids.siteA1] });
    expectError(await invitee.post(`/invitations/${invitation.id}/accept`), 404, 'not_found');
  });
});
