import { randomUUID } from 'node:crypto';
import { GroupRoleMappingEntity } from '../../../src/modules/scim/group-role-mapping.entity';
import { ScimConnectionRepository, type MappingOwner } from '../../../src/modules/scim/scim-connection.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Group-to-role mappings (group_role_mappings) of an SSO provider through GroupRoleMappingEntity:
 * a list replaced as a whole, read back in its order with what is stored, and another
 * organization's mappings neither seen, replaced nor planted.
 */
describe('group-role mappings through the entity', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: ScimConnectionRepository;
  let ownerA: MappingOwner;
  let ownerB: MappingOwner;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const stored = async (providerId: string) =>
    (await m.owner.query(`SELECT org_id, partner_id, connection_id, position, idp_group, site_ids FROM group_role_mappings WHERE provider_id = $1 ORDER BY position`, [providerId])).rows;
  const provider = async (orgId: string): Promise<MappingOwner> => {
    const id = randomUUID();
    await m.owner.query(`INSERT INTO sso_providers (id, org_id, name, type, status, issuer, client_id) VALUES ($1, $2, 'IdP ' || $3, 'oidc', 'active', 'https://idp.example', 'client')`, [
      id,
      orgId,
      `${t.label}-${id.slice(0, 8)}`,
    ]);
    return { orgId, partnerId: null, providerId: id };
  };

  beforeAll(async () => {
    m = await startMedium([ScimConnectionRepository], {}, { entities: [GroupRoleMappingEntity] });
    repo = m.get(ScimConnectionRepository);
    t = await seedTenants(m.owner);
    ownerA = await provider(t.orgA);
    ownerB = await provider(t.orgB);
  });
  afterAll(() => m.close());

  it('replaces a provider’s list as a whole and reads it back in order, positions from 0', async () => {
    await m.as(asAdminA(), () => repo.replaceMappings(ownerA, [{ group: 'Old', roleId: t.roleAdminA, siteIds: null }], t.adminA));
    await m.as(asAdminA(), () =>
      repo.replaceMappings(
        ownerA,
        [
          { group: 'Zeta', roleId: t.roleReaderA, siteIds: [t.siteA1] },
          { group: 'Alpha', roleId: t.roleAdminA, siteIds: null },
          { group: 'Mid', roleId: t.roleReaderA, siteIds: [t.siteA1, t.siteA2] },
        ],
        t.adminA,
      ),
    );
    const listed = await m.as(asAdminA(), () => repo.mappings(ownerA));
    expect(listed.map((r) => [r.idpGroup, r.roleId, r.siteIds, r.setBy])).toEqual([
      ['Zeta', t.roleReaderA, [t.siteA1], t.adminA],
      ['Alpha', t.roleAdminA, null, t.adminA],
      ['Mid', t.roleReaderA, [t.siteA1, t.siteA2], t.adminA],
    ]);
    expect(listed[0]).toEqual(expect.objectContaining({ id: expect.any(String), orgId: t.orgA, partnerId: null, providerId: ownerA.providerId, connectionId: null, position: 0, createdAt: expect.any(Date) }));
    expect((await stored(ownerA.providerId!)).map((r) => [r.position, r.idp_group, r.site_ids])).toEqual([
      [0, 'Zeta', [t.siteA1]],
      [1, 'Alpha', null],
      [2, 'Mid', [t.siteA1, t.siteA2]],
    ]);
    await m.as(asAdminA(), () => repo.replaceMappings(ownerA, [], t.adminA));
    expect(await m.as(asAdminA(), () => repo.mappings(ownerA))).toEqual([]);
  });

  it('neither shows nor replaces another organization’s mappings, and refuses to plant one', async () => {
    await m.as(asAdminB(), () => repo.replaceMappings(ownerB, [{ group: 'B admins', roleId: t.roleAdminB, siteIds: null }], t.adminB));
    expect(await m.as(asAdminA(), () => repo.mappings(ownerB))).toEqual([]);
    await m.as(asAdminA(), () => repo.replaceMappings(ownerB, [], t.adminA));
    await expect(m.as(asAdminA(), () => repo.replaceMappings(ownerB, [{ group: 'Planted', roleId: t.roleAdminA, siteIds: null }], t.adminA))).rejects.toThrow(/row-level security/);
    expect((await stored(ownerB.providerId!)).map((r) => r.idp_group)).toEqual(['B admins']);
  });
});
