import { randomBytes, randomUUID } from 'node:crypto';
import { AccountProvisioningRepository } from '../../../src/modules/tenancy/users/account-provisioning.repository';
import { InvitationRepository } from '../../../src/modules/tenancy/users/invitation.repository';
import { MembershipInvitationEntity } from '../../../src/modules/tenancy/users/membership-invitation.entity';
import { OrganizationMembershipEntity, OrganizationMembershipSiteEntity } from '../../../src/modules/tenancy/users/organization-membership.entity';
import { PartnerMembershipEntity, PartnerMembershipOrgEntity, PartnerMembershipSiteEntity } from '../../../src/modules/tenancy/users/partner-membership.entity';
import { UserEntity } from '../../../src/modules/tenancy/users/user.entity';
import { UserRepository } from '../../../src/modules/tenancy/users/user.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

const USER_ENTITIES = [
  UserEntity,
  OrganizationMembershipEntity,
  OrganizationMembershipSiteEntity,
  PartnerMembershipEntity,
  PartnerMembershipOrgEntity,
  PartnerMembershipSiteEntity,
  MembershipInvitationEntity,
];

/**
 * Users are global identities that a tenant sees through its memberships; memberships and
 * invitations are its own rows. What the administrators of A see, write and invite, what an
 * invitee accepts (system context, bound to the invitee), and what provisioning writes, SCIM's
 * deprovisioning included.
 */
describe('users, memberships and invitations', () => {
  let m: Medium;
  let t: TenantRows;
  let users: UserRepository;
  let invitations: InvitationRepository;
  let accounts: AccountProvisioningRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const page = { limit: 50, offset: 0 };
  /** An identity of its own, created as the owner, member of `orgId` when given. */
  const person = async (tag: string, orgId?: string, roleId?: string) => {
    const id = randomUUID();
    await m.owner.query(`INSERT INTO users (id, email, name) VALUES ($1, $2, $3)`, [id, `${tag}@${t.label}.example`, `Person ${tag}`]);
    if (orgId) await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [orgId, id, roleId]);
    return id;
  };
  const orgInvitation = (orgId: string, userId: string, over: Partial<Parameters<UserRepository['insertOrgInvitation']>[0]> = {}) => ({
    orgId,
    userId,
    roleId: t.roleReaderA,
    siteIds: null,
    email: `invited-${userId.slice(0, 8)}@${t.label}.example`,
    name: 'As Invited',
    invitedBy: t.adminA,
    ...over,
  });

  beforeAll(async () => {
    m = await startMedium([UserRepository, InvitationRepository, AccountProvisioningRepository], {}, { entities: USER_ENTITIES });
    users = m.get(UserRepository);
    invitations = m.get(InvitationRepository);
    accounts = m.get(AccountProvisioningRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('UserRepository', () => {
    it('pages an organization’s members by email, with the total, and searches email and name literally', async () => {
      const listed = await m.as(asAdminA(), () => users.list({ orgId: t.orgA }, page));
      expect(listed.rows.map((u) => u.id)).toEqual([t.adminA, t.readerA, t.siteUserA1]);
      expect(listed.total).toBe(3);
      expect(listed.rows[0]).toEqual({
        id: t.adminA,
        email: t.emails.adminA,
        name: 'Admin A',
        status: 'active',
        mfaEnabled: false,
        createdAt: expect.any(Date),
        updatedAt: expect.any(Date),
      });
      expect(await m.as(asAdminA(), () => users.list({ orgId: t.orgA }, { limit: 1, offset: 1 }))).toMatchObject({ rows: [{ id: t.readerA }], total: 3 });
      expect((await m.as(asAdminA(), () => users.list({ orgId: t.orgA, search: 'READER' }, page))).rows.map((u) => u.id)).toEqual([t.readerA]);
      expect((await m.as(asAdminA(), () => users.list({ orgId: t.orgA, search: 'site a1' }, page))).rows.map((u) => u.id)).toEqual([t.siteUserA1]);
      expect(await m.as(asAdminA(), () => users.list({ orgId: t.orgA, search: 'a_min' }, page))).toEqual({ rows: [], total: 0 });
    });

    it('shows an identity of another tenant that the caller invited only as the caller wrote it', async () => {
      const memberOfB = await person('member-of-b', t.orgB, t.roleAdminB);
      await m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgA, memberOfB, { email: `Typed@${t.label}.example` })));
      const asSeenByA = await m.as(asAdminA(), () => users.find(memberOfB));
      expect(asSeenByA).toMatchObject({ id: memberOfB, email: `Typed@${t.label}.example`, name: 'As Invited', status: 'active', mfaEnabled: false });
      expect((await m.as(asAdminA(), () => users.list({ orgId: t.orgA, search: 'typed' }, page))).rows.map((u) => u.id)).toEqual([memberOfB]);
      expect(await m.as(asAdminA(), () => users.isVisibleIdentity(memberOfB))).toBe(false);
      expect(await m.as(asAdminB(), () => users.find(memberOfB))).toMatchObject({ email: `member-of-b@${t.label}.example`, name: 'Person member-of-b' });
    });

    it('never shows another tenant’s users, their email or their memberships', async () => {
      expect(await m.as(asAdminA(), () => users.find(t.adminB))).toBeNull();
      expect(await m.as(asAdminA(), () => users.isVisibleIdentity(t.adminB))).toBe(false);
      expect(await m.as(asAdminA(), () => users.isVisibleIdentity(t.readerA))).toBe(true);
      expect(await m.as(asAdminA(), () => users.emailVisible(t.emails.adminB))).toBe(false);
      expect(await m.as(asAdminA(), () => users.emailVisible(t.emails.readerA.toUpperCase()))).toBe(true);
      expect(await m.as(asAdminA(), () => users.list({ orgId: t.orgB }, page))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminA(), () => users.memberships([t.adminB], [t.orgB]))).toEqual([]);
      expect(await m.as(asAdminA(), () => users.idByEmail(t.emails.adminB))).toBeNull();
      expect(await m.system(() => users.idByEmail(t.emails.adminB.toUpperCase()))).toBe(t.adminB);
    });

    it('reads memberships with their sites, and an invitation as a pending one with the sites that still exist', async () => {
      const gone = randomUUID();
      const invitee = await person('invitee-sites');
      await m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgA, invitee, { siteIds: [t.siteA2, gone, t.siteB1] })));
      const views = await m.as(asAdminA(), () => users.memberships([t.adminA, t.siteUserA1, invitee], [t.orgA]));
      // The order is the next test's subject; here, what each user's row holds.
      const byUser = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      expect(byUser(views.map((v) => [v.userId, v.roleId, v.siteIds, v.pending]))).toEqual(
        byUser([
          [t.adminA, t.roleAdminA, null, false],
          [t.siteUserA1, t.roleAdminA, [t.siteA1], false],
          [invitee, t.roleReaderA, [t.siteA2], true],
        ]),
      );
      expect(await m.as(asAdminA(), () => users.emailVisible(`INVITED-${invitee.slice(0, 8)}@${t.label}.example`))).toBe(true);
      expect(await m.as(asAdminB(), () => users.emailVisible(`invited-${invitee.slice(0, 8)}@${t.label}.example`))).toBe(false);
    });

    it('lists memberships and invitations that share a creation time and organization in user order', async () => {
      const ids = Array.from({ length: 6 }, () => randomUUID()).sort();
      await m.owner.query(
        `INSERT INTO users (id, email, name) SELECT u, 'same-time-' || u || '@' || $2 || '.example', 'Same Time' FROM unnest($1::uuid[]) AS u`,
        [ids, t.label],
      );
      const at = '2026-01-02T03:04:05.678Z';
      const [invited, ...members] = [ids[3], ...ids.filter((_, i) => i !== 3)];
      // Written in descending user order in one statement, as one transaction would, so the table's order is not the answer's.
      await m.owner.query(
        `INSERT INTO organization_memberships (org_id, user_id, role_id, created_at) SELECT $1, u, $2, $3 FROM unnest($4::uuid[]) AS u`,
        [t.orgA, t.roleReaderA, at, [...members].reverse()],
      );
      await m.owner.query(
        `INSERT INTO membership_invitations (org_id, user_id, role_id, email, name, created_at) VALUES ($1, $2, $3, $4, 'Same Time', $5)`,
        [t.orgA, invited, t.roleReaderA, `same-time-invited@${t.label}.example`, at],
      );
      const views = await m.as(asAdminA(), () => users.memberships([...ids].reverse(), [t.orgA]));
      expect(views.map((v) => [v.userId, v.pending])).toEqual(ids.map((id) => [id, id === invited]));
    });

    it('creates a user once per email, and writes, restricts to sites, and removes its membership', async () => {
      const id = randomUUID();
      const email = `new-member@${t.label}.example`;
      expect(await m.as(asAdminA(), () => users.insertUserIfNew({ id, email, name: 'New Member', passwordHash: null }))).toBe(1);
      expect(await m.as(asAdminA(), () => users.insertUserIfNew({ id: randomUUID(), email: email.toUpperCase(), name: 'Again', passwordHash: null }))).toBe(0);
      await m.as(asAdminA(), () => users.insertMembership({ orgId: t.orgA, userId: id, roleId: t.roleReaderA, siteIds: [t.siteA2] }));
      expect(await m.as(asAdminA(), () => users.membership(t.orgA, id))).toMatchObject({ roleId: t.roleReaderA, siteIds: [t.siteA2], pending: false });
      await m.as(asAdminA(), () => users.updateMembership(t.orgA, id, { roleId: t.roleAdminA, siteIds: [t.siteA1, t.siteA2] }));
      expect((await m.as(asAdminA(), () => users.membership(t.orgA, id)))!.siteIds).toEqual([t.siteA1, t.siteA2].sort());
      await m.as(asAdminA(), () => users.updateMembership(t.orgA, id, { siteIds: null }));
      expect(await m.as(asAdminA(), () => users.membership(t.orgA, id))).toMatchObject({ roleId: t.roleAdminA, siteIds: null });
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM organization_membership_sites WHERE user_id = $1`, [id])).rows[0].n).toBe(0);
      expect(await m.as(asAdminA(), () => users.deleteMembership(t.orgA, id))).toBe(1);
      expect(await m.as(asAdminA(), () => users.find(id))).toBeNull();
    });

    it('changes and withdraws an invitation of the caller’s organization, and leaves another tenant’s as it was', async () => {
      const invitee = await person('invitee-change');
      await m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgA, invitee)));
      expect(await m.as(asAdminA(), () => users.updateOrgInvitation(t.orgA, invitee, {}))).toBe(1);
      expect(await m.as(asAdminA(), () => users.updateOrgInvitation(t.orgA, invitee, { roleId: t.roleAdminA, siteIds: [t.siteA1] }))).toBe(1);
      expect(await m.as(asAdminA(), () => users.membership(t.orgA, invitee))).toMatchObject({ roleId: t.roleAdminA, siteIds: [t.siteA1], pending: true });
      await m.as(asAdminB(), () => users.insertOrgInvitation(orgInvitation(t.orgB, invitee, { roleId: t.roleAdminB, invitedBy: t.adminB })));
      expect(await m.as(asAdminA(), () => users.updateOrgInvitation(t.orgB, invitee, { roleId: t.roleAdminB }))).toBe(0);
      expect(await m.as(asAdminA(), () => users.updateOrgInvitation(t.orgB, invitee, {}))).toBe(0);
      expect(await m.as(asAdminA(), () => users.deleteOrgInvitation(t.orgB, invitee))).toBe(0);
      expect(await m.as(asAdminA(), () => users.deleteOrgInvitation(t.orgA, invitee))).toBe(1);
      expect((await m.owner.query(`SELECT org_id FROM membership_invitations WHERE user_id = $1`, [invitee])).rows).toEqual([{ org_id: t.orgB }]);
    });

    it('refuses memberships and invitations into another tenant, and removes none of its members', async () => {
      const id = await person('planted');
      await expect(m.as(asAdminA(), () => users.insertMembership({ orgId: t.orgB, userId: id, roleId: t.roleAdminB, siteIds: null }))).rejects.toThrow(/row-level security/);
      await expect(m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgB, id, { roleId: t.roleAdminB })))).rejects.toThrow(/row-level security/);
      expect(await m.as(asAdminA(), () => users.deleteMembership(t.orgB, t.adminB))).toBe(0);
      await m.as(asAdminA(), () => users.updateMembership(t.orgB, t.adminB, { roleId: t.roleAdminA }));
      await expect(m.as(asAdminA(), () => users.updateMembership(t.orgB, t.adminB, { siteIds: [t.siteA1] }))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT role_id, site_restricted FROM organization_memberships WHERE user_id = $1`, [t.adminB])).rows).toEqual([
        { role_id: t.roleAdminB, site_restricted: false },
      ]);
    });

    it('writes a technician’s membership with its organizations and sites, and invites one to selected organizations', async () => {
      const id = await person('new-tech');
      await m.as(asTech(), () =>
        users.insertPartnerMembership({ partnerId: t.partnerP, userId: id, roleId: t.roleTech, orgAccess: 'selected', orgIds: [t.orgA], sites: [{ orgId: t.orgA, siteId: t.siteA1 }] }),
      );
      expect(await m.as(asTech(), () => users.partnerMemberships([id], [t.partnerP]))).toEqual([
        { userId: id, partnerId: t.partnerP, roleId: t.roleTech, orgAccess: 'selected', createdAt: expect.any(Date), orgIds: [t.orgA], siteIds: [t.siteA1], pending: false },
      ]);
      expect(await m.system(() => users.partnerOf(id))).toBe(t.partnerP);
      const invitee = await person('tech-invitee');
      await m.as(asTech(), () =>
        users.insertPartnerInvitation({ partnerId: t.partnerP, userId: invitee, roleId: t.roleTech, orgAccess: 'selected', orgIds: [t.orgA2, t.orgB], siteIds: null, email: 'x@y.example', name: 'X', invitedBy: t.tech }),
      );
      expect(await m.as(asTech(), () => users.partnerMemberships([invitee], [t.partnerP]))).toMatchObject([{ orgAccess: 'selected', orgIds: [t.orgA2], siteIds: null, pending: true }]);
      expect(await m.as(asAdminB(), () => users.partnerMemberships([id, invitee], [t.partnerP]))).toEqual([]);
    });
  });

  describe('InvitationRepository (system context, bound to the invitee)', () => {
    it('lists the invitee’s invitations oldest first with the names of the tenants that invited them', async () => {
      const invitee = await person('lists');
      await m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgA, invitee)));
      await m.as(asTech(), () =>
        users.insertPartnerInvitation({ partnerId: t.partnerP, userId: invitee, roleId: t.roleTech, orgAccess: 'all', orgIds: [], siteIds: null, email: 'x@y.example', name: 'X', invitedBy: t.tech }),
      );
      const listed = await m.system(() => invitations.forUser(invitee));
      expect(listed.map((i) => [i.orgId, i.partnerId, i.organizationName, i.partnerName])).toEqual([
        [t.orgA, null, `Org A ${t.label}`, null],
        [null, t.partnerP, null, `Partner P ${t.label}`],
      ]);
      expect(await m.system(() => invitations.forUser(t.adminB))).toEqual([]);
    });

    it('accepts an organization invitation once, with only the sites of the organization that still exist', async () => {
      const invitee = await person('accepts');
      const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO sites (org_id, name) VALUES ($1, 'doomed') RETURNING id`, [t.orgA]);
      await m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgA, invitee, { siteIds: [t.siteA2, rows[0].id, t.siteB1] })));
      await m.owner.query(`DELETE FROM sites WHERE id = $1`, [rows[0].id]);
      const [listed] = await m.system(() => invitations.forUser(invitee));
      await m.system(async () => {
        const locked = await invitations.lock(listed.id, invitee);
        await invitations.acceptOrganization(locked!);
        await invitations.acceptOrganization(locked!);
        expect(await invitations.delete(listed.id, invitee)).toBe(1);
      });
      expect(await m.as(asAdminA(), () => users.membership(t.orgA, invitee))).toMatchObject({ roleId: t.roleReaderA, siteIds: [t.siteA2], pending: false });
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM membership_invitations WHERE user_id = $1`, [invitee])).rows[0].n).toBe(0);
    });

    it('accepts a partner invitation with only the partner’s organizations and sites', async () => {
      const invitee = await person('accepts-partner');
      await m.as(asTech(), () =>
        users.insertPartnerInvitation({
          partnerId: t.partnerP,
          userId: invitee,
          roleId: t.roleTech,
          orgAccess: 'selected',
          orgIds: [t.orgA, t.orgB],
          siteIds: [t.siteA1, t.siteX1, t.siteB1],
          email: 'x@y.example',
          name: 'X',
          invitedBy: t.tech,
        }),
      );
      const [listed] = await m.system(() => invitations.forUser(invitee));
      await m.system(async () => invitations.acceptPartner((await invitations.lock(listed.id, invitee))!));
      expect(await m.as(asTech(), () => users.partnerMemberships([invitee], [t.partnerP]))).toMatchObject([{ orgAccess: 'selected', orgIds: [t.orgA], siteIds: [t.siteA1], pending: false }]);
      expect(await m.system(() => invitations.partnerOf(invitee))).toBe(t.partnerP);
    });

    it('neither locks nor deletes an invitation for someone else', async () => {
      const invitee = await person('not-yours');
      await m.as(asAdminA(), () => users.insertOrgInvitation(orgInvitation(t.orgA, invitee)));
      const [listed] = await m.system(() => invitations.forUser(invitee));
      expect(await m.system(() => invitations.lock(listed.id, t.adminB))).toBeNull();
      expect(await m.system(() => invitations.delete(listed.id, t.adminB))).toBe(0);
      expect(await m.system(() => invitations.lock(listed.id, invitee))).toMatchObject({ id: listed.id, orgId: t.orgA, roleId: t.roleReaderA });
    });
  });

  describe('AccountProvisioningRepository', () => {
    it('creates an account once per email, and an active one without a password', async () => {
      const email = `provisioned@${t.label}.example`;
      const id = await m.system(() => accounts.createUser(email, 'Provisioned'));
      expect(id).toEqual(expect.any(String));
      expect(await m.system(() => accounts.createUser(email.toUpperCase(), 'Again'))).toBeNull();
      const active = await m.system(() => accounts.createActiveUser(`active@${t.label}.example`, 'Active'));
      expect((await m.owner.query(`SELECT status, password_hash FROM users WHERE id = $1`, [active])).rows).toEqual([{ status: 'active', password_hash: null }]);
    });

    it('adds a member once, changes its role and sites, and suspends and reactivates it', async () => {
      const id = await person('scim-member');
      expect(await m.as(asAdminA(), () => accounts.addOrgMember(t.orgA, id, t.roleReaderA))).toBe(1);
      expect(await m.as(asAdminA(), () => accounts.addOrgMember(t.orgA, id, t.roleAdminA))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.setOrgRole(t.orgA, id, t.roleReaderA, false))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.setOrgRole(t.orgA, id, t.roleReaderA, true))).toBe(1);
      await m.as(asAdminA(), () => accounts.replaceOrgSites(t.orgA, id, [t.siteA2, t.siteA1]));
      expect(await m.as(asAdminA(), () => accounts.orgSites(t.orgA, id))).toEqual([t.siteA1, t.siteA2].sort());
      const scope = { orgId: t.orgA, partnerId: null };
      expect(await m.as(asAdminA(), () => accounts.reactivate(scope, id))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.suspend(scope, id))).toBe(1);
      const first = (await m.owner.query(`SELECT suspended_at FROM organization_memberships WHERE user_id = $1`, [id])).rows[0].suspended_at;
      expect(await m.as(asAdminA(), () => accounts.suspend(scope, id))).toBe(1);
      expect((await m.owner.query(`SELECT suspended_at FROM organization_memberships WHERE user_id = $1`, [id])).rows[0].suspended_at).toEqual(first);
      expect(await m.as(asAdminA(), () => accounts.reactivate(scope, id))).toBe(1);
      expect((await m.owner.query(`SELECT suspended_at FROM organization_memberships WHERE user_id = $1`, [id])).rows[0].suspended_at).toBeNull();
    });

    it('changes a profile only when the email or name differs', async () => {
      const id = await person('profile', t.orgA, t.roleReaderA);
      expect(await m.as(asAdminA(), () => accounts.updateProfile(id, `profile@${t.label}.example`, 'Person profile'))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.updateProfile(id, `profile@${t.label}.example`, 'Renamed'))).toBe(1);
      expect((await m.owner.query(`SELECT name FROM users WHERE id = $1`, [id])).rows[0].name).toBe('Renamed');
    });

    it('writes a technician’s membership and role within the partner', async () => {
      const id = await person('scim-tech');
      await m.as(asTech(), () => accounts.addPartnerMember(t.partnerP, id, t.roleTech));
      expect(await m.as(asTech(), () => accounts.setPartnerRole(t.partnerP, id, t.roleTech))).toBe(0);
      const scope = { orgId: null, partnerId: t.partnerP };
      expect(await m.as(asTech(), () => accounts.suspend(scope, id))).toBe(1);
      expect((await m.owner.query(`SELECT org_access, suspended_at IS NOT NULL AS suspended FROM partner_memberships WHERE user_id = $1`, [id])).rows).toEqual([
        { org_access: 'all', suspended: true },
      ]);
    });

    it('deprovisions a member in the given organization only: membership, sessions, keys and filed requests there, nothing in another tenant', async () => {
      const member = await person('leaver', t.orgA, t.roleReaderA);
      // The same person is also a member of organization B, with a session and a key there.
      await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [t.orgB, member, t.roleAdminB]);
      const session = async (orgId: string) =>
        (await m.owner.query(`INSERT INTO sessions (user_id, scope, org_id, auth_method, expires_at) VALUES ($1, 'organization', $2, 'password', now() + interval '1 hour') RETURNING id`, [member, orgId]))
          .rows[0].id as string;
      const key = async (orgId: string) =>
        (await m.owner.query(`INSERT INTO api_keys (org_id, name, key_prefix, key_hash, created_by) VALUES ($1, 'k', 'rmm_', $2, $3) RETURNING id`, [orgId, randomBytes(16).toString('hex'), member]))
          .rows[0].id as string;
      const [sessionA, sessionB, keyA, keyB] = [await session(t.orgA), await session(t.orgB), await key(t.orgA), await key(t.orgB)];
      const filed = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, subjectUserId: member });
      const filedInB = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, subjectUserId: member });

      const counts = await m.system(() => accounts.deprovision({ orgId: t.orgA, partnerId: null }, member, 'scim_deprovisioned'));
      expect(counts).toMatchObject({ sessionIds: [sessionA], sessionsRevoked: 1, apiKeysRevoked: 1, pendingRequestsRevoked: 1, elevationsRevoked: 0 });
      const state = async (sql: string, ids: string[]) => (await m.owner.query(sql, [ids])).rows;
      expect(await state(`SELECT org_id, suspended_at IS NOT NULL AS suspended FROM organization_memberships WHERE user_id = ANY($1) ORDER BY org_id = '${t.orgA}' DESC`, [member])).toEqual([
        { org_id: t.orgA, suspended: true },
        { org_id: t.orgB, suspended: false },
      ]);
      expect(await state(`SELECT id, revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = ANY($1)`, [sessionA, sessionB])).toEqual(
        expect.arrayContaining([
          { id: sessionA, revoked: true },
          { id: sessionB, revoked: false },
        ]),
      );
      expect(await state(`SELECT id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE id = ANY($1)`, [keyA, keyB])).toEqual(
        expect.arrayContaining([
          { id: keyA, revoked: true },
          { id: keyB, revoked: false },
        ]),
      );
      expect(await state(`SELECT id, status FROM elevation_requests WHERE id = ANY($1)`, [filed, filedInB])).toEqual(
        expect.arrayContaining([
          { id: filed, status: 'revoked' },
          { id: filedInB, status: 'pending' },
        ]),
      );
    });

    it('neither changes, suspends nor adds members of another tenant', async () => {
      const scopeB = { orgId: t.orgB, partnerId: null };
      expect(await m.as(asAdminA(), () => accounts.updateProfile(t.adminB, 'taken@example.com', 'Hijacked'))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.suspend(scopeB, t.adminB))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.setOrgRole(t.orgB, t.adminB, t.roleReaderA, true))).toBe(0);
      expect(await m.as(asAdminA(), () => accounts.orgSites(t.orgB, t.adminB))).toEqual([]);
      expect(await m.as(asAdminA(), () => accounts.suspend({ orgId: null, partnerId: t.partnerQ }, t.adminB))).toBe(0);
      await expect(m.as(asAdminA(), () => accounts.addOrgMember(t.orgB, t.readerA, t.roleAdminB))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT u.name, m.suspended_at, m.site_restricted FROM users u JOIN organization_memberships m ON m.user_id = u.id WHERE u.id = $1`, [t.adminB])).rows).toEqual([
        { name: 'Admin B', suspended_at: null, site_restricted: false },
      ]);
    });
  });
});
