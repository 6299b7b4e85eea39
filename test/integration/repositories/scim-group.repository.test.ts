import { randomBytes } from 'node:crypto';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { GroupRoleMappingEntity } from '../../../src/modules/scim/group-role-mapping.entity';
import { ScimConnectionRepository } from '../../../src/modules/scim/scim-connection.repository';
import { scimFilterToSql } from '../../../src/modules/scim/scim-filter';
import { ScimGroupRepository } from '../../../src/modules/scim/scim-group.repository';
import type { ConnectionScope } from '../../../src/modules/scim/scim-user.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * A SCIM connection's groups and their members: the list with its total, a group by id within
 * the connection only, names unique whatever their case, membership written set-based (linking the
 * people to the connection), and what re-applying group-to-role mappings reads. Under the tenant's
 * scope, as SCIM requests run; another tenant reads and writes none of it.
 */
describe('ScimGroupRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let groups: ScimGroupRepository;
  let connections: ScimConnectionRepository;
  let scopeA: ConnectionScope;
  let otherA: ConnectionScope;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  /** The Groups list's filter attributes, as the Groups endpoint gives them. */
  const filter = (text: string) =>
    scimFilterToSql(text, { displayname: { sql: 'display_name', kind: 'string', caseExact: false }, externalid: { sql: 'external_id', kind: 'string', caseExact: true }, id: { sql: 'id::text', kind: 'string', caseExact: true } }, {}, 2);
  const newConnection = async (name: string): Promise<ConnectionScope> => {
    const token = `scim-${randomBytes(6).toString('hex')}`;
    const c = await m.as(asAdminA(), () => connections.insert({ orgId: t.orgA, partnerId: null, name, tokenPrefix: token.slice(0, 9), tokenHash: tokenHash(token), defaultRoleId: null, userId: t.adminA }));
    return { connectionId: c!.id, orgId: t.orgA, partnerId: null };
  };
  const group = async (scope: ConnectionScope, name: string, externalId: string | null = null) => (await m.as(asAdminA(), () => groups.insert(scope, name, externalId)))!;
  const updatedAt = async (id: string) => (await m.owner.query<{ updated_at: Date }>(`SELECT updated_at FROM scim_groups WHERE id = $1`, [id])).rows[0].updated_at;

  beforeAll(async () => {
    m = await startMedium([ScimGroupRepository, ScimConnectionRepository], {}, { entities: [GroupRoleMappingEntity] });
    groups = m.get(ScimGroupRepository);
    connections = m.get(ScimConnectionRepository);
    t = await seedTenants(m.owner);
    scopeA = await newConnection('Groups IdP');
    otherA = await newConnection('Other IdP');
  });
  afterAll(() => m.close());

  it('creates a group under the connection and finds it by id there only', async () => {
    const g = await group(scopeA, 'Found', 'ext-found');
    expect(g).toEqual({ id: expect.any(String), display_name: 'Found', external_id: 'ext-found', created_at: expect.any(Date), updated_at: expect.any(Date) });
    expect(await m.as(asAdminA(), () => groups.find(scopeA.connectionId, g.id))).toEqual(g);
    expect(await m.as(asAdminA(), () => groups.find(otherA.connectionId, g.id))).toBeNull();
    expect((await m.owner.query(`SELECT org_id, partner_id FROM scim_groups WHERE id = $1`, [g.id])).rows).toEqual([{ org_id: t.orgA, partner_id: null }]);
  });

  it('tells a displayName taken whatever its case, within the connection only', async () => {
    await group(scopeA, 'Engineering Leads');
    expect(await m.as(asAdminA(), () => groups.nameTaken(scopeA.connectionId, 'ENGINEERING leads'))).toBe(true);
    expect(await m.as(asAdminA(), () => groups.nameTaken(scopeA.connectionId, 'Engineering'))).toBe(false);
    expect(await m.as(asAdminA(), () => groups.nameTaken(otherA.connectionId, 'Engineering Leads'))).toBe(false);
  });

  it('pages the connection’s groups in creation order with the filter’s total, and counts the matches for a page past the end', async () => {
    const scope = await newConnection('Paged IdP');
    const made = [await group(scope, 'Paged one'), await group(scope, 'Paged two', 'x-2'), await group(scope, 'Other')];
    await group(otherA, 'Paged elsewhere');
    const first = await m.as(asAdminA(), () => groups.page(scope.connectionId, null, 0, 2));
    expect(first.map((r) => [r.id, Number(r.total)])).toEqual([
      [made[0].id, 3],
      [made[1].id, 3],
    ]);
    const paged = filter('displayName sw "paged"');
    expect((await m.as(asAdminA(), () => groups.page(scope.connectionId, paged, 1, 10))).map((r) => [r.display_name, Number(r.total)])).toEqual([['Paged two', 2]]);
    expect((await m.as(asAdminA(), () => groups.page(scope.connectionId, filter('externalId eq "x-2"'), 0, 10))).map((r) => r.id)).toEqual([made[1].id]);
    expect(await m.as(asAdminA(), () => groups.page(scope.connectionId, paged, 5, 10))).toEqual([]);
    expect(await m.as(asAdminA(), () => groups.count(scope.connectionId, paged))).toBe(2);
    expect(await m.as(asAdminA(), () => groups.count(scope.connectionId, null))).toBe(3);
  });

  it('renames a group and changes or clears its externalId, each moving its lastModified', async () => {
    const g = await group(scopeA, 'Before', 'ext-before');
    const created = await updatedAt(g.id);
    expect(await m.as(asAdminA(), () => groups.rename(g.id, 'After'))).toBe(1);
    const renamed = await updatedAt(g.id);
    expect(renamed.getTime()).toBeGreaterThan(created.getTime());
    expect(await m.as(asAdminA(), () => groups.setExternalId(g.id, null))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.find(scopeA.connectionId, g.id))).toMatchObject({ display_name: 'After', external_id: null });
    expect((await updatedAt(g.id)).getTime()).toBeGreaterThan(renamed.getTime());
  });

  it('adds members once, linking them to the connection, lists them by email, and removes only those who were members', async () => {
    const scope = await newConnection('Members IdP');
    const g = await group(scope, 'Members');
    expect((await m.as(asAdminA(), () => groups.addMembers(scope, g.id, [t.readerA, t.adminA]))).sort()).toEqual([t.readerA, t.adminA].sort());
    expect(await m.as(asAdminA(), () => groups.addMembers(scope, g.id, [t.readerA]))).toEqual([]);
    expect((await m.owner.query(`SELECT user_id FROM scim_users WHERE connection_id = $1 ORDER BY user_id`, [scope.connectionId])).rows.map((r) => r.user_id)).toEqual([t.readerA, t.adminA].sort());
    const members = await m.as(asAdminA(), () => groups.members(g.id));
    expect(members).toEqual(
      [
        { user_id: t.readerA, email: t.emails.readerA },
        { user_id: t.adminA, email: t.emails.adminA },
      ].sort((a, b) => a.email.localeCompare(b.email)),
    );
    expect((await m.as(asAdminA(), () => groups.memberIds(g.id))).sort()).toEqual([t.readerA, t.adminA].sort());
    expect(await m.as(asAdminA(), () => groups.removeMembers(g.id, [t.readerA, t.siteUserA1]))).toEqual([t.readerA]);
    expect(await m.as(asAdminA(), () => groups.memberIds(g.id))).toEqual([t.adminA]);
    const before = await updatedAt(g.id);
    expect(await m.as(asAdminA(), () => groups.touch(g.id))).toBe(1);
    expect((await updatedAt(g.id)).getTime()).toBeGreaterThan(before.getTime());
  });

  it('takes a person out of every group of the connection, and of no other connection’s', async () => {
    const scope = await newConnection('Leaver IdP');
    const [one, two, elsewhere] = [await group(scope, 'One'), await group(scope, 'Two'), await group(otherA, 'Elsewhere')];
    for (const [s, g] of [
      [scope, one],
      [scope, two],
      [otherA, elsewhere],
    ] as const)
      await m.as(asAdminA(), () => groups.addMembers(s, g.id, [t.siteUserA1, t.readerA]));
    expect(await m.as(asAdminA(), () => groups.removeFromAll(scope.connectionId, t.siteUserA1))).toBe(2);
    expect(await m.as(asAdminA(), () => groups.memberIds(one.id))).toEqual([t.readerA]);
    expect(await m.as(asAdminA(), () => groups.memberIds(two.id))).toEqual([t.readerA]);
    expect((await m.as(asAdminA(), () => groups.memberIds(elsewhere.id))).sort()).toEqual([t.siteUserA1, t.readerA].sort());
  });

  it('deletes a group with its memberships, leaving the people linked to the connection', async () => {
    const g = await group(scopeA, 'Doomed');
    await m.as(asAdminA(), () => groups.addMembers(scopeA, g.id, [t.readerA]));
    expect(await m.as(asAdminA(), () => groups.delete(g.id))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.find(scopeA.connectionId, g.id))).toBeNull();
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM scim_group_members WHERE group_id = $1`, [g.id])).rows[0].n).toBe(0);
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM scim_users WHERE connection_id = $1 AND user_id = $2`, [scopeA.connectionId, t.readerA])).rows[0].n).toBe(1);
  });

  it('reads what re-applying mappings needs: whether the connection has any, its default role, and the names of a person’s groups there', async () => {
    const scope = await newConnection('Mapped IdP');
    expect(await m.as(asAdminA(), () => groups.hasMappings(scope.connectionId))).toBe(false);
    expect(await m.as(asAdminA(), () => groups.defaultRoleId(scope.connectionId))).toBeNull();
    await m.as(asAdminA(), () => connections.replaceMappings(scope, [{ group: 'Readers', roleId: t.roleReaderA, siteIds: null }], t.adminA));
    await m.owner.query(`UPDATE scim_connections SET default_role_id = $2 WHERE id = $1`, [scope.connectionId, t.roleReaderA]);
    expect(await m.as(asAdminA(), () => groups.hasMappings(scope.connectionId))).toBe(true);
    expect(await m.as(asAdminA(), () => groups.defaultRoleId(scope.connectionId))).toBe(t.roleReaderA);
    const [readers, admins, elsewhere] = [await group(scope, 'Readers'), await group(scope, 'Admins'), await group(otherA, 'Readers elsewhere')];
    for (const [s, g] of [
      [scope, readers],
      [scope, admins],
      [otherA, elsewhere],
    ] as const)
      await m.as(asAdminA(), () => groups.addMembers(s, g.id, [t.readerA]));
    expect((await m.as(asAdminA(), () => groups.groupNamesOf(scope.connectionId, t.readerA))).sort()).toEqual(['Admins', 'Readers']);
    expect(await m.as(asAdminA(), () => groups.groupNamesOf(scope.connectionId, t.adminA))).toEqual([]);
  });

  it('shows another tenant none of the connection’s groups or members, and lets it change none of them', async () => {
    const g = await group(scopeA, 'Private', 'ext-private');
    await m.as(asAdminA(), () => groups.addMembers(scopeA, g.id, [t.readerA]));
    expect(await m.as(asAdminB(), () => groups.page(scopeA.connectionId, null, 0, 100))).toEqual([]);
    expect(await m.as(asAdminB(), () => groups.count(scopeA.connectionId, null))).toBe(0);
    expect(await m.as(asAdminB(), () => groups.find(scopeA.connectionId, g.id))).toBeNull();
    expect(await m.as(asAdminB(), () => groups.nameTaken(scopeA.connectionId, 'Private'))).toBe(false);
    expect(await m.as(asAdminB(), () => groups.members(g.id))).toEqual([]);
    expect(await m.as(asAdminB(), () => groups.memberIds(g.id))).toEqual([]);
    expect(await m.as(asAdminB(), () => groups.groupNamesOf(scopeA.connectionId, t.readerA))).toEqual([]);
    expect(await m.as(asAdminB(), () => groups.rename(g.id, 'Hijacked'))).toBe(0);
    expect(await m.as(asAdminB(), () => groups.setExternalId(g.id, null))).toBe(0);
    expect(await m.as(asAdminB(), () => groups.removeMembers(g.id, [t.readerA]))).toEqual([]);
    expect(await m.as(asAdminB(), () => groups.removeFromAll(scopeA.connectionId, t.readerA))).toBe(0);
    expect(await m.as(asAdminB(), () => groups.delete(g.id))).toBe(0);
    await expect(m.as(asAdminB(), () => groups.insert(scopeA, 'Planted', null))).rejects.toThrow(/row-level security/);
    await expect(m.as(asAdminB(), () => groups.addMembers(scopeA, g.id, [t.adminB]))).rejects.toThrow(/row-level security/);
    expect(await m.as(asAdminA(), () => groups.find(scopeA.connectionId, g.id))).toMatchObject({ display_name: 'Private', external_id: 'ext-private' });
    expect(await m.as(asAdminA(), () => groups.memberIds(g.id))).toEqual([t.readerA]);
  });
});
