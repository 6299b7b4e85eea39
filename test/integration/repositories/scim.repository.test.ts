import { randomBytes } from 'node:crypto';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { GroupRoleMappingEntity } from '../../../src/modules/scim/group-role-mapping.entity';
import { ScimConnectionRepository } from '../../../src/modules/scim/scim-connection.repository';
import { scimFilterToSql } from '../../../src/modules/scim/scim-filter';
import { ScimUserRepository, type ConnectionScope } from '../../../src/modules/scim/scim-user.repository';
import { lookupCandidates, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS } from '../../../src/modules/scim/scim-resource.util';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * SCIM provisioning: the users a connection governs and linking them; connections and group
 * mappings. Deprovisioning itself is tenancy's (user.repository.test.ts, AccountProvisioningRepository).
 */
describe('SCIM repositories', () => {
  let m: Medium;
  let t: TenantRows;
  let users: ScimUserRepository;
  let connections: ScimConnectionRepository;
  let scopeA: ConnectionScope;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const filter = (text: string) => scimFilterToSql(text, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS, 3);
  const newConnection = (orgId: string | null, partnerId: string | null, userId: string, name = 'IdP') => {
    const token = `scim-${randomBytes(6).toString('hex')}`;
    return connections.insert({ orgId, partnerId, name, tokenPrefix: token.slice(0, 9), tokenHash: tokenHash(token), defaultRoleId: null, userId });
  };

  beforeAll(async () => {
    m = await startMedium([ScimUserRepository, ScimConnectionRepository], {}, { entities: [GroupRoleMappingEntity] });
    users = m.get(ScimUserRepository);
    connections = m.get(ScimConnectionRepository);
    t = await seedTenants(m.owner);
    const connection = await m.as(asAdminA(), () => newConnection(t.orgA, null, t.adminA));
    scopeA = { connectionId: connection!.id, orgId: t.orgA, partnerId: null };
  });
  afterAll(() => m.close());

  describe('ScimUserRepository', () => {
    it('lists the organization’s members in creation order with the exact total, and filters them', async () => {
      const all = await m.as(asAdminA(), () => users.list(scopeA, null, 0, 100));
      expect(all.total).toBe(3);
      expect(all.rows.map((r) => r.id).sort()).toEqual([t.adminA, t.siteUserA1, t.readerA].sort());
      expect(all.rows.every((r) => r.active && r.external_id === null)).toBe(true);
      const one = await m.as(asAdminA(), () => users.list(scopeA, filter(`userName eq "${t.emails.readerA.toUpperCase()}"`), 0, 100));
      expect(one).toEqual({ total: 1, rows: [expect.objectContaining({ id: t.readerA, email: t.emails.readerA })] });
      const emails = await m.as(asAdminA(), () => users.list(scopeA, filter(`emails[type eq "work" and value sw "site-a1@"]`), 0, 100));
      expect(emails.rows.map((r) => r.id)).toEqual([t.siteUserA1]);
    });

    it('answers every filter the same whether its statement opens the transaction (values inlined) or follows (bound parameters)', async () => {
      const filters = [
        `userName eq "${t.emails.readerA.toUpperCase()}"`,
        'emails[type eq "work" and value sw "site-a1@"]',
        'meta.created gt "2000-01-01T00:00:00Z" and active eq true',
        `displayName co "A" and not (displayName eq "Reader A")`,
        `displayName co "'" or userName co "%_"`,
      ];
      const sizes = [];
      for (const text of filters) {
        const inlined = await m.as(asAdminA(), () => users.list(scopeA, filter(text), 0, 100));
        const bound = await m.asOpened(asAdminA(), () => users.list(scopeA, filter(text), 0, 100));
        expect({ text, rows: bound.rows, total: bound.total }).toEqual({ text, rows: inlined.rows, total: inlined.total });
        sizes.push(inlined.total);
      }
      expect(sizes).toEqual([1, 1, 3, 2, 0]);
    });

    it('answers the lookups IdPs make the same with and without reading only their candidates, a connection-own userName included', async () => {
      await m.as(asAdminA(), async () => {
        await users.link(scopeA, t.siteUserA1, 'ext-cand');
        await users.saveProfile(scopeA, t.siteUserA1, { userName: 'Site-UPN' });
      });
      const lookups = [
        `userName eq "${t.emails.readerA.toUpperCase()}"`,
        'userName eq "site-upn"',
        `userName eq "${t.emails.siteUserA1}"`,
        `emails[type eq "work"].value eq "${t.emails.adminA}"`,
        'externalId eq "ext-cand"',
        'userName eq "nobody@nowhere.example"',
      ];
      const found: number[] = [];
      for (const text of lookups) {
        const candidates = lookupCandidates(text);
        expect(candidates).toBeDefined();
        const plain = await m.as(asAdminA(), () => users.list(scopeA, filter(text), 0, 100));
        const narrowed = await m.as(asAdminA(), () => users.list(scopeA, filter(text), 0, 100, candidates));
        expect({ text, ...narrowed }).toEqual({ text, ...plain });
        found.push(plain.total);
      }
      expect(found).toEqual([1, 1, 0, 1, 1, 0]);
      expect(lookupCandidates('userName eq "a" or userName eq "b"')).toBeUndefined();
    });

    it('pages the list and still answers the exact total for a page past the end', async () => {
      const page = await m.as(asAdminA(), () => users.list(scopeA, null, 1, 1));
      expect(page.total).toBe(3);
      expect(page.rows).toHaveLength(1);
      expect(await m.as(asAdminA(), () => users.list(scopeA, null, 10, 5))).toEqual({ total: 3, rows: [] });
    });

    it('links a member to the connection’s externalId, keeps it when none is given and clears it when null is', async () => {
      const externalId = async () => (await m.as(asAdminA(), () => users.get(scopeA, t.readerA)))!.external_id;
      await m.as(asAdminA(), () => users.link(scopeA, t.readerA, 'ext-1'));
      expect(await externalId()).toBe('ext-1');
      await m.as(asAdminA(), () => users.link(scopeA, t.readerA, undefined));
      expect(await externalId()).toBe('ext-1');
      expect((await m.as(asAdminA(), () => users.list(scopeA, filter('externalId eq "ext-1"'), 0, 10))).rows.map((r) => r.id)).toEqual([t.readerA]);
      await m.as(asAdminA(), () => users.link(scopeA, t.readerA, null));
      expect(await externalId()).toBeNull();
    });

    it('finds a member by address or userName whatever its case, and no one outside the organization', async () => {
      const facts = (email: string, userName: string) => m.as(asAdminA(), () => users.provisioningFacts(scopeA, t.adminA, email, userName, 'example.invalid'));
      // This connection has no default role: nothing to grant, so no one may grant it.
      expect(await facts(t.emails.adminA.toUpperCase(), 'someone-new')).toMatchObject({ taken: true, deletedId: null, defaultRoleId: null, mayGrantDefaultRole: false });
      expect(await facts('someone-new@example.invalid', t.emails.adminA.toUpperCase())).toMatchObject({ taken: true });
      expect(await facts(t.emails.adminB, t.emails.adminB)).toMatchObject({ taken: false, deletedId: null });
      expect(await m.as(asAdminA(), () => users.get(scopeA, t.tech))).toBeNull();
    });

    it('links a member with the connection’s profile in one statement, leaving the fields not given as they are', async () => {
      const stored = async () => (await m.as(asAdminA(), () => users.get(scopeA, t.readerA)))!;
      await m.as(asAdminA(), () => users.link(scopeA, t.readerA, undefined, { userName: 'reader.a', displayName: 'Reader A', givenName: 'Reader', familyName: 'A' }));
      const answered = await m.as(asAdminA(), () => users.link(scopeA, t.readerA, undefined, { familyName: null }));
      expect(await stored()).toMatchObject({ user_name: 'reader.a', name: 'Reader A', given_name: 'Reader', family_name: null });
      // The link answers the person as a read after it sees them.
      expect(answered).toEqual(await stored());
    });

    it('keeps its row of a person it deleted, who is then none of its people, and tells which ids are its people', async () => {
      const c = await m.as(asAdminA(), () => newConnection(t.orgA, null, t.adminA, 'Forgetting'));
      const scope = { connectionId: c!.id, orgId: t.orgA, partnerId: null };
      try {
        expect(await m.as(asAdminA(), () => users.isLinked(scope, t.readerA))).toBe(false);
        expect((await m.as(asAdminA(), () => users.existing(scope, [t.readerA, t.adminA, t.adminB]))).sort()).toEqual([t.readerA, t.adminA].sort());
        await m.as(asAdminA(), () => users.link(scope, t.readerA, 'ext-forgotten'));
        expect(await m.as(asAdminA(), () => users.isLinked(scope, t.readerA))).toBe(true);
        expect(await m.as(asAdminA(), () => users.markDeleted(scope, t.readerA))).toBe(1);
        expect(await m.as(asAdminA(), () => users.isLinked(scope, t.readerA))).toBe(true);
        expect(await m.as(asAdminA(), () => users.get(scope, t.readerA))).toBeNull();
        expect(await m.as(asAdminA(), () => users.existing(scope, [t.readerA, t.adminA]))).toEqual([t.adminA]);
        expect(await m.as(asAdminB(), () => users.isLinked(scope, t.readerA))).toBe(false);
      } finally {
        // Gone again: the connection tests below list the organization's connections.
        await m.owner.query(`DELETE FROM scim_connections WHERE id = $1`, [scope.connectionId]);
      }
    });

    it('finds an account by address whatever its case in system context, and tells whether another account holds it', async () => {
      expect(await m.system(() => users.userIdByEmail(t.emails.readerA.toUpperCase()))).toEqual({ id: t.readerA, status: 'active' });
      expect(await m.system(() => users.emailTakenByOther(t.adminA, t.emails.readerA.toUpperCase()))).toBe(true);
      expect(await m.system(() => users.emailTakenByOther(t.readerA, t.emails.readerA))).toBe(false);
    });

    it('reads a member whose membership is suspended (deprovisioned) as inactive, and filters on it', async () => {
      await m.owner.query(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [t.orgA, t.siteUserA1]);
      try {
        expect((await m.as(asAdminA(), () => users.get(scopeA, t.siteUserA1)))!.active).toBe(false);
        expect((await m.as(asAdminA(), () => users.list(scopeA, filter('active eq false'), 0, 100))).rows.map((r) => r.id)).toEqual([t.siteUserA1]);
      } finally {
        await m.owner.query(`UPDATE organization_memberships SET suspended_at = NULL WHERE org_id = $1 AND user_id = $2`, [t.orgA, t.siteUserA1]);
      }
      expect((await m.as(asAdminA(), () => users.get(scopeA, t.siteUserA1)))!.active).toBe(true);
    });

    it('shows another tenant none of the organization’s members, and refuses its links into the organization’s connection', async () => {
      expect(await m.as(asAdminB(), () => users.list(scopeA, null, 0, 100))).toEqual({ total: 0, rows: [] });
      expect(await m.as(asAdminB(), () => users.get(scopeA, t.adminA))).toBeNull();
      await expect(m.as(asAdminB(), () => users.link(scopeA, t.adminB, 'planted'))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM scim_users WHERE connection_id = $1 AND user_id = $2`, [scopeA.connectionId, t.adminB])).rows[0].n).toBe(0);
    });
  });

  describe('ScimConnectionRepository', () => {
    it('lists an organization’s connections, and a partner’s apart from its organizations’', async () => {
      const second = await m.as(asAdminA(), () => newConnection(t.orgA, null, t.adminA, 'Second'));
      const partnerOwned = await m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech }), () => newConnection(null, t.partnerP, t.tech, 'Partner IdP'));
      expect((await m.as(asAdminA(), () => connections.list({ orgId: t.orgA }))).map((c) => c.id)).toEqual([scopeA.connectionId, second!.id]);
      expect((await m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2]), () => connections.list({ partnerId: t.partnerP }))).map((c) => c.id)).toEqual([partnerOwned!.id]);
      expect(second).not.toHaveProperty('token_hash');
    });

    it('rotates a live connection’s token under the rotating administrator, and not a revoked one', async () => {
      const c = await m.as(asAdminA(), () => newConnection(t.orgA, null, t.adminA, 'Rotate'));
      const rotated = await m.as(asAdminA(), () => connections.rotate(c!.id, 'scim_new', tokenHash('new'), t.siteUserA1));
      expect(rotated).toMatchObject({ token_prefix: 'scim_new', acting_user_id: t.siteUserA1, rotated_at: expect.any(Date) });
      const revoked = await m.as(asAdminA(), () => connections.revoke(c!.id));
      expect(revoked!.revoked_at).toBeInstanceOf(Date);
      expect((await m.as(asAdminA(), () => connections.revoke(c!.id)))!.revoked_at).toEqual(revoked!.revoked_at);
      expect(await m.as(asAdminA(), () => connections.rotate(c!.id, 'scim_again', tokenHash('again'), t.adminA))).toBeNull();
    });

    it('replaces a connection’s group mappings in the given order, with sites or none', async () => {
      const owner = { orgId: t.orgA, partnerId: null, connectionId: scopeA.connectionId };
      await m.as(asAdminA(), () =>
        connections.replaceMappings(
          owner,
          [
            { group: 'Admins', roleId: t.roleAdminA, siteIds: null },
            { group: 'Readers A1', roleId: t.roleReaderA, siteIds: [t.siteA1] },
          ],
          t.adminA,
        ),
      );
      await m.as(asAdminA(), () => connections.replaceMappings(owner, [{ group: 'Readers', roleId: t.roleReaderA, siteIds: [t.siteA1, t.siteA2] }, { group: 'Admins', roleId: t.roleAdminA, siteIds: null }], t.adminA));
      const mappings = await m.as(asAdminA(), () => connections.mappings(owner));
      expect(mappings.map((r) => ({ group: r.idpGroup, role: r.roleId, sites: r.siteIds, by: r.setBy }))).toEqual([
        { group: 'Readers', role: t.roleReaderA, sites: [t.siteA1, t.siteA2], by: t.adminA },
        { group: 'Admins', role: t.roleAdminA, sites: null, by: t.adminA },
      ]);
      expect(await m.as(asAdminA(), () => connections.sitesOf(t.orgA, [t.siteA1, t.siteB1]))).toEqual([t.siteA1]);
    });

    it('neither shows, rotates, revokes nor remaps another tenant’s connection', async () => {
      const id = scopeA.connectionId;
      expect(await m.as(asAdminB(), () => connections.byId(id))).toBeNull();
      expect(await m.as(asAdminB(), () => connections.list({ orgId: t.orgA }))).toEqual([]);
      expect(await m.as(asAdminB(), () => connections.rotate(id, 'scim_evil', tokenHash('evil'), t.adminB))).toBeNull();
      expect(await m.as(asAdminB(), () => connections.revoke(id))).toBeNull();
      expect(await m.as(asAdminB(), () => connections.role(t.roleAdminA))).toBeNull();
      expect(await m.as(asAdminB(), () => connections.organizationVisible(t.orgA))).toBe(false);
      await m.as(asAdminB(), () => connections.replaceMappings({ orgId: t.orgA, partnerId: null, connectionId: id }, [], t.adminB));
      expect(await m.as(asAdminA(), () => connections.mappings({ orgId: t.orgA, partnerId: null, connectionId: id }))).toHaveLength(2);
      expect(await m.as(asAdminA(), () => connections.byId(id))).toMatchObject({ revoked_at: null, acting_user_id: t.adminA });
    });
  });
});
