import { randomUUID } from 'node:crypto';
import { PersonAuthorityRepository } from '../../../src/modules/tenancy/users/person-authority.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The rule of acting on a person, asked through the request role: an actor must hold in the tenant
 * at least what the person holds there (permissions, organizations, sites). The rule reads past
 * row-level security; the account status of `standing` does not.
 */
describe('PersonAuthorityRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let rule: PersonAuthorityRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const inA = () => ({ orgId: t.orgA });
  const inB = () => ({ orgId: t.orgB });
  const inP = () => ({ partnerId: t.partnerP });
  /** An identity of its own, member of orgA with `roleId` when given. */
  const person = async (tag: string, roleId?: string, status = 'active') => {
    const id = randomUUID();
    await m.owner.query(`INSERT INTO users (id, email, name, status) VALUES ($1, $2, $3, $4)`, [id, `${tag}@${t.label}.example`, `Person ${tag}`, status]);
    if (roleId) await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [t.orgA, id, roleId]);
    return id;
  };

  beforeAll(async () => {
    m = await startMedium([PersonAuthorityRepository]);
    rule = m.get(PersonAuthorityRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('mayActOn', () => {
    it('lets an actor act on a person whose permissions and sites it covers, and not the other way round', async () => {
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.adminA, t.readerA, inA()))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.adminA, t.siteUserA1, inA()))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.readerA, t.adminA, inA()))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.siteUserA1, t.adminA, inA()))).toBe(false);
    });

    it('counts a technician’s reach into the organizations of its partner, and within the partner itself', async () => {
      expect(await m.as(asTech(), () => rule.mayActOn(t.tech, t.adminA, inA()))).toBe(true);
      expect(await m.as(asTech(), () => rule.mayActOn(t.adminA, t.tech, inP()))).toBe(false);
      expect(await m.as(asTech(), () => rule.mayActOn(t.tech, t.adminB, inB()))).toBe(false);
    });

    it('gives an actor of another tenant no authority, and an unknown actor none', async () => {
      expect(await m.as(asAdminB(), () => rule.mayActOn(t.adminB, t.readerA, inA()))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.adminA, t.adminB, inB()))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayActOn(randomUUID(), t.readerA, inA()))).toBe(false);
    });

    it('withholds authority from a suspended actor and from a disabled account', async () => {
      const suspended = await person('suspended-admin', t.roleAdminA);
      await m.owner.query(`UPDATE organization_memberships SET suspended_at = now() WHERE user_id = $1`, [suspended]);
      const disabled = await person('disabled-admin', t.roleAdminA, 'disabled');
      expect(await m.as(asAdminA(), () => rule.mayActOn(suspended, t.readerA, inA()))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayActOn(disabled, t.readerA, inA()))).toBe(false);
      // What the suspended person still holds binds whoever acts on them.
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.readerA, suspended, inA()))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayActOn(t.adminA, suspended, inA()))).toBe(true);
    });
  });

  describe('standing', () => {
    it('answers the actor’s account status with the rule’s answer in one row', async () => {
      expect(await m.as(asAdminA(), () => rule.standing(t.adminA, t.readerA, inA()))).toEqual({ active: true, covers: true });
      expect(await m.as(asAdminA(), () => rule.standing(t.readerA, t.adminA, inA()))).toEqual({ active: true, covers: false });
      const disabled = await person('disabled-standing', t.roleAdminA, 'disabled');
      expect(await m.as(asAdminA(), () => rule.standing(disabled, t.readerA, inA()))).toEqual({ active: false, covers: false });
    });

    it('answers null for an account that does not exist or that the caller’s tenant does not see', async () => {
      expect(await m.as(asAdminA(), () => rule.standing(randomUUID(), t.readerA, inA()))).toBeNull();
      expect(await m.as(asAdminA(), () => rule.standing(t.adminB, t.readerA, inA()))).toBeNull();
      expect(await m.as(asAdminB(), () => rule.standing(t.adminB, t.readerA, inA()))).toEqual({ active: true, covers: false });
    });
  });

  describe('mayActOnIdentity', () => {
    it('lets a person act on their own identity, and an actor on one whose every membership it covers', async () => {
      expect(await m.as(asAdminA(), () => rule.mayActOnIdentity(t.readerA, t.readerA))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayActOnIdentity(t.adminA, t.readerA))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayActOnIdentity(t.readerA, t.adminA))).toBe(false);
    });

    it('refuses an identity that is also a member elsewhere, and one that is a member nowhere', async () => {
      const both = await person('in-a-and-b', t.roleReaderA);
      await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [t.orgB, both, t.roleAdminB]);
      expect(await m.as(asAdminA(), () => rule.mayActOnIdentity(t.adminA, both))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayActOnIdentity(t.adminA, t.tech))).toBe(false);
      const nowhere = await person('nowhere');
      expect(await m.as(asAdminA(), () => rule.mayActOnIdentity(t.adminA, nowhere))).toBe(false);
      expect(await m.as(asAdminB(), () => rule.mayActOnIdentity(t.adminB, t.readerA))).toBe(false);
    });
  });

  describe('mayChangeEmail', () => {
    it('lets a person change their own address, and an administrator only onto a verified domain of the organization that owns the account', async () => {
      const owned = await person('owned', t.roleReaderA);
      const domain = `${t.label}.example`;
      expect(await m.as(asAdminA(), () => rule.mayChangeEmail(owned, owned, `anything@elsewhere.example`))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayChangeEmail(t.adminA, owned, `renamed@${domain}`))).toBe(false);
      await m.owner.query(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_seen_at) VALUES ($1, $2, $3, true, now(), now())`, [t.orgA, domain, `token-${t.label}`]);
      expect(await m.as(asAdminA(), () => rule.mayChangeEmail(t.adminA, owned, `renamed@${domain.toUpperCase()}`))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayChangeEmail(t.adminA, owned, `renamed@elsewhere.example`))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayChangeEmail(t.readerA, owned, `renamed@${domain}`))).toBe(true);
      expect(await m.as(asAdminB(), () => rule.mayChangeEmail(t.adminB, owned, `renamed@${domain}`))).toBe(false);
    });
  });

  describe('mayGrant', () => {
    it('lets an actor grant permissions it holds, on sites it reaches', async () => {
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.adminA, inA(), ['devices:execute', 'users:write'], null))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.readerA, inA(), ['devices:read'], null))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.readerA, inA(), [], null))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.readerA, inA(), ['devices:execute'], null))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.readerA, inA(), ['devices:*'], null))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.siteUserA1, inA(), ['devices:read'], null))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.siteUserA1, inA(), ['devices:read'], [t.siteA1]))).toBe(true);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.siteUserA1, inA(), ['devices:read'], [t.siteA1, t.siteA2]))).toBe(false);
    });

    it('gives nothing to grant in a tenant the actor is not in', async () => {
      expect(await m.as(asAdminB(), () => rule.mayGrant(t.adminB, inA(), ['devices:read'], null))).toBe(false);
      expect(await m.as(asAdminA(), () => rule.mayGrant(t.adminA, inP(), ['devices:read'], null))).toBe(false);
      expect(await m.as(asTech(), () => rule.mayGrant(t.tech, inP(), ['devices:read'], null))).toBe(true);
    });
  });
});
