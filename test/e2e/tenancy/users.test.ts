import request from 'supertest';
import { DbService } from '../../../src/infra/database/db.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import type { TenantScope } from '../../../src/infra/database/tenant-scope';
import { AccountProvisioningRepository } from '../../../src/modules/tenancy/users/account-provisioning.repository';
import { MembershipInvitationEntity } from '../../../src/modules/tenancy/users/membership-invitation.entity';
import { OrganizationMembershipEntity } from '../../../src/modules/tenancy/users/organization-membership.entity';
import { UserCredentialRepository } from '../../../src/modules/tenancy/users/user-credential.repository';
import { UserEntity } from '../../../src/modules/tenancy/users/user.entity';
import { UserRepository } from '../../../src/modules/tenancy/users/user.repository';
import { PASSWORD, uniq } from '../../factories/tenant.factory';
import { ownerQuery } from '../../support/test-app';
import { Caller, expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

interface UserBody {
  id: string;
  email: string;
  memberships: { orgId: string; roleId: string; siteIds: string[] | null }[];
  partnerMembership: { partnerId: string; orgAccess: string; orgIds: string[] | null; siteIds: string[] | null } | null;
}

describe('users and memberships administration', () => {
  let w: TenancyWorld;
  let manager: Caller;
  let domain: string;
  const email = (who: string) => `${who}-${uniq('u')}@${domain}`;

  beforeAll(async () => {
    w = await startTenancyWorld((f) => ({
      ...f,
      roles: [
        ...f.roles!,
        { key: 'managerRoleA', scope: 'organization', organization: 'orgA', name: 'Manager', permissions: ['users:*', 'devices:read'] },
        { key: 'readerRoleB', scope: 'organization', organization: 'orgB', name: 'Reader', permissions: ['devices:read'] },
      ],
      users: [
        ...f.users!,
        { key: 'managerA', email: `manager@${f.emails.adminA.split('@')[1]}`, password: PASSWORD, memberships: [{ organization: 'orgA', role: 'managerRoleA' }] },
      ],
    }));
    domain = w.f.emails.adminA.split('@')[1];
    manager = await w.session(w.ids.managerA);
  }, 60_000);
  afterAll(() => w.t.close());

  const ids = (users: UserBody[]) => users.map((u) => u.id);

  it('lists the users of the caller organization with their memberships', async () => {
    const res = await w.as.adminA.get('/users').expect(200);
    expect(res.body.success).toBe(true);
    expect(ids(res.body.users)).toEqual(expect.arrayContaining([w.ids.adminA, w.ids.readerA, w.ids.siteA1User]));
    expect(ids(res.body.users)).not.toContain(w.ids.adminB);
    expect(ids(res.body.users)).not.toContain(w.ids.tech);
    expect(res.body.pagination).toMatchObject({ page: 1, limit: 50, total: res.body.users.length });
    const restricted = res.body.users.find((u: UserBody) => u.id === w.ids.siteA1User);
    expect(restricted.memberships).toEqual([expect.objectContaining({ orgId: w.ids.orgA, roleId: w.ids.adminRoleA, siteIds: [w.ids.siteA1] })]);
    expect(JSON.stringify(res.body)).not.toMatch(/argon2|password|totp/i);
  });

  it('lists technicians and the users of reachable organizations for a partner technician', async () => {
    const all = await w.as.tech.get('/users').expect(200);
    expect(ids(all.body.users)).toEqual(expect.arrayContaining([w.ids.adminA, w.ids.adminB, w.ids.tech, w.ids.techA]));
    const limited = await w.as.techA.get('/users').expect(200);
    expect(ids(limited.body.users)).toContain(w.ids.adminA);
    expect(ids(limited.body.users)).not.toContain(w.ids.adminB);
    const techA = limited.body.users.find((u: UserBody) => u.id === w.ids.techA);
    expect(techA.partnerMembership).toMatchObject({ partnerId: w.ids.partner, orgAccess: 'selected', orgIds: [w.ids.orgA], siteIds: null });
    const onlyB = await w.as.tech.get(`/users?orgId=${w.ids.orgB}`).expect(200);
    expect(ids(onlyB.body.users)).toEqual([w.ids.adminB]);
  });

  it('answers another tenant user id with 404', async () => {
    expectError(await w.as.adminA.get(`/users/${w.ids.adminB}`), 404, 'not_found');
    expectError(await w.as.adminA.get(`/users/${w.ids.tech}`), 404, 'not_found');
    expectError(await w.as.techA.get(`/users/${w.ids.adminB}`), 404, 'not_found');
    expectError(await w.as.adminA.post(`/users/${w.ids.adminB}/memberships`, { orgId: w.ids.orgA, roleId: w.ids.readerRoleA }), 404, 'not_found');
    expectError(await w.as.adminA.delete(`/users/${w.ids.adminB}/memberships/${w.ids.orgB}`), 404, 'not_found');
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE user_id = $1`, [w.ids.adminB])).toHaveLength(1);
  });

  it('creates a user with an argon2id password and a membership, who can then sign in', async () => {
    const address = email('new');
    const res = await w.as.adminA.post('/users', { email: address, name: 'New Person', password: 'twelve-chars', roleId: w.ids.readerRoleA }).expect(201);
    expect(res.body.user).toMatchObject({ email: address, name: 'New Person', status: 'active', mfaEnabled: false });
    expect(res.body.user.memberships).toEqual([expect.objectContaining({ orgId: w.ids.orgA, roleId: w.ids.readerRoleA, siteIds: null })]);
    const [row] = await ownerQuery<{ password_hash: string }>(`SELECT password_hash FROM users WHERE id = $1`, [res.body.user.id]);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    const login = await request(w.t.http).post('/api/v1/auth/login').send({ email: address, password: 'twelve-chars' }).expect(200);
    expect(login.body.accessToken).toEqual(expect.any(String));
    const [audit] = await ownerQuery<{ action: string; org_id: string }>(`SELECT action, org_id FROM audit_logs WHERE resource_id = $1`, [res.body.user.id]);
    expect(audit).toEqual({ action: 'user.create', org_id: w.ids.orgA });
  });

  it('answers an email the caller already sees, in any case, with 409 email_taken', async () => {
    const res = await w.as.adminA.post('/users', { email: w.f.emails.readerA.toUpperCase(), name: 'Dup', roleId: w.ids.readerRoleA });
    expectError(res, 409, 'email_taken');
    expect(await ownerQuery(`SELECT 1 FROM users WHERE lower(email) = lower($1)`, [w.f.emails.readerA])).toHaveLength(1);
  });

  it('answers an email held only in another tenant as a new one, inviting that identity instead of duplicating it', async () => {
    const res = await w.as.adminA.post('/users', { email: w.f.emails.adminB.toUpperCase(), name: 'Dup', roleId: w.ids.readerRoleA }).expect(201);
    expect(res.body.user).toMatchObject({ id: w.ids.adminB, name: 'Dup', memberships: [expect.objectContaining({ orgId: w.ids.orgA })] });
    expect(await ownerQuery(`SELECT 1 FROM users WHERE lower(email) = lower($1)`, [w.f.emails.adminB])).toHaveLength(1);
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [w.ids.orgA, w.ids.adminB])).toEqual([]);
    await w.as.adminA.delete(`/users/${w.ids.adminB}/memberships/${w.ids.orgA}`).expect(200);
  });

  it('requires the role to belong to the membership organization', async () => {
    expectError(await w.as.adminA.post('/users', { email: email('x'), name: 'X', roleId: w.ids.adminRoleB }), 404, 'not_found');
    expectError(await w.as.tech.post('/users', { email: email('x'), name: 'X', orgId: w.ids.orgA, roleId: w.ids.adminRoleB }), 400, 'role_scope_mismatch');
    expectError(await w.as.tech.post('/users', { email: email('x'), name: 'X', orgId: w.ids.orgA, roleId: w.ids.techRole }), 400, 'role_scope_mismatch');
    expectError(await w.as.tech.post('/users', { email: email('x'), name: 'X', orgId: w.ids.orgA, roleId: w.ids.readerRoleA, siteIds: [w.ids.siteB1] }), 404, 'not_found');
  });

  it('refuses to grant a role beyond the caller permissions with privilege_escalation', async () => {
    const res = await manager.post('/users', { email: email('esc'), name: 'Esc', roleId: w.ids.adminRoleA });
    expectError(res, 403, 'privilege_escalation');
    expect(res.body.permissions).toEqual(['*']);
    expectError(await manager.patch(`/users/${w.ids.readerA}/memberships/${w.ids.orgA}`, { roleId: w.ids.adminRoleA }), 403, 'privilege_escalation');
    expectError(await manager.delete(`/users/${w.ids.adminA}/memberships/${w.ids.orgA}`), 403, 'privilege_escalation');
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE user_id = $1`, [w.ids.adminA])).toHaveLength(1);
  });

  it('lets a site-restricted administrator grant only their own sites', async () => {
    expectError(await w.as.siteA1.post('/users', { email: email('s'), name: 'S', roleId: w.ids.readerRoleA }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post('/users', { email: email('s'), name: 'S', roleId: w.ids.readerRoleA, siteIds: [w.ids.siteA2] }), 403, 'site_access_denied');
    const ok = await w.as.siteA1.post('/users', { email: email('s'), name: 'S', roleId: w.ids.readerRoleA, siteIds: [w.ids.siteA1] }).expect(201);
    expect(ok.body.user.memberships[0].siteIds).toEqual([w.ids.siteA1]);
    expectError(await w.as.siteA1.patch(`/users/${w.ids.readerA}/memberships/${w.ids.orgA}`, { siteIds: [w.ids.siteA1] }), 403, 'site_access_denied');
  });

  it('adds, changes and removes organization memberships, auditing each', async () => {
    const created = await w.as.tech.post('/users', { email: email('m'), name: 'M', orgId: w.ids.orgA, roleId: w.ids.readerRoleA }).expect(201);
    const id = created.body.user.id;
    const added = await w.as.tech.post(`/users/${id}/memberships`, { orgId: w.ids.orgB, roleId: w.ids.readerRoleB }).expect(201);
    expect(added.body.user.memberships.map((m: { orgId: string }) => m.orgId).sort()).toEqual([w.ids.orgA, w.ids.orgB].sort());
    expectError(await w.as.tech.post(`/users/${id}/memberships`, { orgId: w.ids.orgB, roleId: w.ids.readerRoleB }), 409, 'membership_exists');
    expectError(await w.as.tech.post(`/users/${id}/memberships`, { orgId: w.ids.orgB, roleId: w.ids.readerRoleA }), 409, 'membership_exists');

    const restricted = await w.as.adminA.patch(`/users/${id}/memberships/${w.ids.orgA}`, { roleId: w.ids.managerRoleA, siteIds: [w.ids.siteA2] }).expect(200);
    expect(restricted.body.user.memberships).toEqual([expect.objectContaining({ orgId: w.ids.orgA, roleId: w.ids.managerRoleA, siteIds: [w.ids.siteA2] })]);
    const widened = await w.as.adminA.patch(`/users/${id}/memberships/${w.ids.orgA}`, { siteIds: null }).expect(200);
    expect(widened.body.user.memberships[0]).toMatchObject({ roleId: w.ids.managerRoleA, siteIds: null });
    expectError(await w.as.adminA.patch(`/users/${id}/memberships/${w.ids.orgA}`, { roleId: w.ids.readerRoleB }), 404, 'not_found');
    expectError(await w.as.adminA.patch(`/users/${id}/memberships/${w.ids.orgB}`, { roleId: w.ids.readerRoleA }), 404, 'not_found');

    expect((await w.as.tech.delete(`/users/${id}/memberships/${w.ids.orgB}`).expect(200)).body).toEqual({ success: true });
    expectError(await w.as.tech.delete(`/users/${id}/memberships/${w.ids.orgB}`), 404, 'not_found');
    await w.as.adminA.delete(`/users/${id}/memberships/${w.ids.orgA}`).expect(200);
    expectError(await w.as.adminA.get(`/users/${id}`), 404, 'not_found');

    const audit = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [id]);
    expect(audit.map((a) => a.action)).toEqual(['user.create', 'membership.create', 'membership.update', 'membership.update', 'membership.delete', 'membership.delete']);
  });

  it('makes a new technician with selected organizations who then reaches only those', async () => {
    const address = email('tech');
    const res = await w.as.tech
      .post('/partner-memberships', { email: address, name: 'New Tech', password: PASSWORD, roleId: w.ids.techRole, orgAccess: 'selected', orgIds: [w.ids.orgA] })
      .expect(201);
    expect(res.body.user).toMatchObject({ email: address, memberships: [] });
    expect(res.body.user.partnerMembership).toMatchObject({ partnerId: w.ids.partner, orgAccess: 'selected', orgIds: [w.ids.orgA], siteIds: null });
    const newTech = await w.session(res.body.user.id);
    const sites = await newTech.get('/sites').expect(200);
    expect(sites.body.sites.map((s: { orgId: string }) => s.orgId).every((o: string) => o === w.ids.orgA)).toBe(true);
    expectError(await newTech.get(`/devices/${w.ids.deviceB1}`), 404, 'not_found');
    const audit = await ownerQuery<{ action: string; partner_id: string }>(`SELECT action, partner_id FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [
      res.body.user.id,
    ]);
    expect(audit).toEqual([
      { action: 'user.create', partner_id: w.ids.partner },
      { action: 'partner_membership.create', partner_id: w.ids.partner },
    ]);
  });

  it('makes an existing user a site-restricted technician, once', async () => {
    const created = await w.as.adminA.post('/users', { email: email('ex'), name: 'Existing', roleId: w.ids.readerRoleA }).expect(201);
    const id = created.body.user.id;
    const res = await w.as.tech.post('/partner-memberships', { userId: id, roleId: w.ids.techRole, orgAccess: 'all', siteIds: [w.ids.siteB1] }).expect(201);
    expect(res.body.user.partnerMembership).toMatchObject({ orgAccess: 'all', orgIds: null, siteIds: [w.ids.siteB1] });
    expectError(await w.as.tech.post('/partner-memberships', { userId: id, roleId: w.ids.techRole, orgAccess: 'all' }), 409, 'membership_exists');
  });

  it('keeps technicians within the caller reach and the partner role set', async () => {
    const fresh = () => ({ email: email('t'), name: 'T', roleId: w.ids.techRole });
    expectError(await w.as.adminA.post('/partner-memberships', { ...fresh(), orgAccess: 'all' }), 403, 'partner_scope_required');
    expectError(await w.as.techA.post('/partner-memberships', { ...fresh(), orgAccess: 'all' }), 403, 'privilege_escalation');
    expectError(await w.as.techA.post('/partner-memberships', { ...fresh(), orgAccess: 'selected', orgIds: [w.ids.orgB] }), 404, 'not_found');
    expectError(await w.as.tech.post('/partner-memberships', { ...fresh(), roleId: w.ids.adminRoleA, orgAccess: 'all' }), 400, 'role_scope_mismatch');
    expectError(
      await w.as.tech.post('/partner-memberships', { ...fresh(), orgAccess: 'selected', orgIds: [w.ids.orgA], siteIds: [w.ids.siteB1] }),
      400,
      'site_outside_org_access',
    );
    expectError(await w.as.tech.post('/partner-memberships', { ...fresh(), orgAccess: 'selected' }), 400, 'validation_failed');
    expectError(await w.as.tech.post('/partner-memberships', { ...fresh(), orgAccess: 'all', orgIds: [w.ids.orgA] }), 400, 'validation_failed');
    expectError(await w.as.tech.post('/partner-memberships', { ...fresh(), userId: w.ids.readerA, orgAccess: 'all' }), 400, 'validation_failed');
    expectError(await w.as.tech.post('/partner-memberships', { roleId: w.ids.techRole, orgAccess: 'all' }), 400, 'validation_failed');
    expectError(await w.as.tech.post('/partner-memberships', { ...fresh(), email: w.f.emails.adminB, orgAccess: 'all' }), 409, 'email_taken');
  });

  it('needs users:read to read and users:write with MFA to write', async () => {
    const res = await w.as.readerA.get('/users');
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('users:read');
    expectError(await w.as.adminANoMfa.post('/users', { email: email('n'), name: 'N', roleId: w.ids.readerRoleA }), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.patch(`/users/${w.ids.readerA}/memberships/${w.ids.orgA}`, { siteIds: null }), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.delete(`/users/${w.ids.readerA}/memberships/${w.ids.orgA}`), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.post(`/users/${w.ids.readerA}/memberships`, { orgId: w.ids.orgA, roleId: w.ids.readerRoleA }), 403, 'mfa_required');
  });

  it('rejects bad input with 400 in the contract shape', async () => {
    const base = { name: 'V', roleId: w.ids.readerRoleA };
    expectError(await w.as.adminA.post('/users', { ...base, email: 'not-an-email' }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/users', { ...base, email: email('p'), password: 'eleven-char' }), 400, 'validation_failed');
    await w.as.adminA.post('/users', { ...base, email: email('p'), password: 'twelve-chars' }).expect(201);
    await w.as.adminA.post('/users', { ...base, email: email('n'), name: 'n'.repeat(255) }).expect(201);
    expectError(await w.as.adminA.post('/users', { ...base, email: email('n'), name: 'n'.repeat(256) }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/users', { ...base, email: email('n'), isAdmin: true }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/users', { ...base, email: email('n'), siteIds: [] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/users', { ...base, email: email('n'), siteIds: 'all' }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/users/${w.ids.readerA}/memberships/${w.ids.orgA}`, { roleId: null }), 400, 'validation_failed');
    expectError(await w.as.adminA.raw('post', '/users', '{"email"'), 400, 'invalid_json');
    expectError(await w.as.adminA.get('/users/42'), 400, 'invalid_id');
    expectError(await w.as.adminA.delete(`/users/${w.ids.readerA}/memberships/nope`), 400, 'invalid_id');
  });

  describe('entity repositories on the request transaction', () => {
    const adminAScope = (): TenantScope => ({ scope: 'organization', orgIds: [w.ids.orgA], partnerIds: [], userId: w.ids.adminA, partnerWide: false, siteIds: null });
    const get = <T>(type: new (...args: never[]) => T): T => w.t.app.get(type, { strict: false });

    it("reads a user of the caller's organization without its credentials, and neither sees nor changes another tenant's user", async () => {
      const tx = get(TenantTransactionService);
      const db = get(DbService);
      const users = get(UserRepository);
      const [before] = await ownerQuery(`SELECT email, name, password_hash, totp_pending_secret, updated_at FROM users WHERE id = $1`, [w.ids.adminB]);
      const seen = await tx.run(adminAScope(), async () => ({
        own: await (await db.repo(UserEntity)).findOneBy({ id: w.ids.readerA }),
        visible: await users.isVisibleIdentity(w.ids.readerA),
        other: await users.isVisibleIdentity(w.ids.adminB),
      }));
      expect(seen.own).toMatchObject({ id: w.ids.readerA, status: 'active' });
      // readerA has a password: a credential column read would hold its hash, not undefined.
      expect(Object.entries(seen.own!).filter(([k, v]) => /password|totp/i.test(k) && v !== undefined)).toEqual([]);
      expect({ visible: seen.visible, other: seen.other }).toEqual({ visible: true, other: false });

      expect(await tx.run(adminAScope(), () => get(AccountProvisioningRepository).updateProfile(w.ids.adminB, `hijacked-${uniq('h')}@example.com`, 'Hijacked'))).toBe(0);
      await tx.run(adminAScope(), async () => {
        await get(UserCredentialRepository).setPassword(w.ids.adminB, 'not-a-hash');
        await get(UserCredentialRepository).setPendingTotp(w.ids.adminB, 'not-a-seed');
      });
      const [after] = await ownerQuery(`SELECT email, name, password_hash, totp_pending_secret, updated_at FROM users WHERE id = $1`, [w.ids.adminB]);
      expect(after).toEqual(before);
    });

    it("writes memberships through the entities only within the caller's reach: another organization's membership stays hidden, unchanged and closed to inserts", async () => {
      const tx = get(TenantTransactionService);
      const db = get(DbService);
      const users = get(UserRepository);
      const accounts = get(AccountProvisioningRepository);
      const membershipOf = (orgId: string, userId: string) => ownerQuery(`SELECT role_id, site_restricted, suspended_at FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
      const before = await membershipOf(w.ids.orgB, w.ids.adminB);
      const seen = await tx.run(adminAScope(), async () => (await db.repo(OrganizationMembershipEntity)).findBy({ userId: w.ids.adminB }));
      expect(seen).toEqual([]);
      expect(await tx.run(adminAScope(), () => users.deleteMembership(w.ids.orgB, w.ids.adminB))).toBe(0);
      expect(await tx.run(adminAScope(), () => accounts.suspend({ orgId: w.ids.orgB, partnerId: null }, w.ids.adminB))).toBe(0);
      expect(await tx.run(adminAScope(), () => accounts.setOrgRole(w.ids.orgB, w.ids.adminB, w.ids.readerRoleB, true))).toBe(0);
      await tx.run(adminAScope(), () => users.updateMembership(w.ids.orgB, w.ids.adminB, { roleId: w.ids.readerRoleB, siteIds: null }));
      await expect(tx.run(adminAScope(), () => users.insertMembership({ orgId: w.ids.orgB, userId: w.ids.readerA, roleId: w.ids.readerRoleB, siteIds: null }))).rejects.toThrow(
        /row-level security/,
      );
      expect(await membershipOf(w.ids.orgB, w.ids.adminB)).toEqual(before);
      expect(await membershipOf(w.ids.orgB, w.ids.readerA)).toEqual([]);
    });

    it("writes invitations through the entity only within the caller's reach: another organization's invitation stays hidden, unchanged and closed to inserts", async () => {
      const tx = get(TenantTransactionService);
      const db = get(DbService);
      const users = get(UserRepository);
      const [invitation] = await ownerQuery<{ id: string }>(
        `INSERT INTO membership_invitations (org_id, user_id, role_id, email, name) VALUES ($1, $2, $3, 'invited@example.com', 'Invited') RETURNING id`,
        [w.ids.orgB, w.ids.readerA, w.ids.readerRoleB],
      );
      try {
        const seen = await tx.run(adminAScope(), async () => (await db.repo(MembershipInvitationEntity)).findOneBy({ id: invitation.id }));
        expect(seen).toBeNull();
        expect(await tx.run(adminAScope(), () => users.updateOrgInvitation(w.ids.orgB, w.ids.readerA, { roleId: w.ids.readerRoleA, siteIds: null }))).toBe(0);
        expect(await tx.run(adminAScope(), () => users.deleteOrgInvitation(w.ids.orgB, w.ids.readerA))).toBe(0);
        await expect(
          tx.run(adminAScope(), () =>
            users.insertOrgInvitation({ orgId: w.ids.orgB, userId: w.ids.siteA1User, roleId: w.ids.readerRoleB, siteIds: null, email: 'x@example.com', name: 'X', invitedBy: w.ids.adminA }),
          ),
        ).rejects.toThrow(/row-level security/);
        expect(await ownerQuery(`SELECT role_id FROM membership_invitations WHERE org_id = $1`, [w.ids.orgB])).toEqual([{ role_id: w.ids.readerRoleB }]);
      } finally {
        await ownerQuery(`DELETE FROM membership_invitations WHERE id = $1`, [invitation.id]);
      }
    });
  });
});
