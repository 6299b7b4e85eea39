import { DeviceEntity } from '../../../src/modules/tenancy/devices/device.entity';
import { DeviceGroupMemberEntity } from '../../../src/modules/tenancy/device-groups/device-group-member.entity';
import { DeviceGroupEntity } from '../../../src/modules/tenancy/device-groups/device-group.entity';
import { DeviceGroupRepository } from '../../../src/modules/tenancy/device-groups/device-group.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Device groups and the members of static groups: each group carries the members the caller may see. */
describe('DeviceGroupRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let groups: DeviceGroupRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const sorted = (...ids: string[]) => [...ids].sort();
  const membersOf = async (groupId: string) => (await m.owner.query(`SELECT device_id FROM device_group_members WHERE group_id = $1 ORDER BY device_id`, [groupId])).rows.map((r) => r.device_id);

  beforeAll(async () => {
    m = await startMedium([DeviceGroupRepository], {}, { entities: [DeviceGroupEntity, DeviceGroupMemberEntity, DeviceEntity] });
    groups = m.get(DeviceGroupRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('creates static groups and lists them by name, each with its members in id order', async () => {
    const wide = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: null, name: 'workstations' }));
    const a1 = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: t.siteA1, name: 'a1 desks' }));
    expect(await m.as(asAdminA(), () => groups.addMembers(t.orgA, wide, [t.deviceA2, t.deviceA1]))).toBe(2);
    const listed = await m.as(asAdminA(), () => groups.list({ orgId: t.orgA, siteIds: null }));
    expect(listed.map((g) => [g.name, g.kind, g.siteId, g.deviceIds])).toEqual([
      ['a1 desks', 'static', t.siteA1, []],
      ['workstations', 'static', null, sorted(t.deviceA1, t.deviceA2)],
    ]);
    expect((await m.as(asAdminA(), () => groups.list({ siteId: t.siteA1, siteIds: null }))).map((g) => g.id)).toEqual([a1]);
  });

  it('adds only the devices not yet in the group, and removes one', async () => {
    const id = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: null, name: 'add twice' }));
    expect(await m.as(asAdminA(), () => groups.addMembers(t.orgA, id, [t.deviceA1]))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.addMembers(t.orgA, id, [t.deviceA1, t.deviceA2]))).toBe(1);
    expect(await membersOf(id)).toEqual(sorted(t.deviceA1, t.deviceA2));
    expect(await m.as(asAdminA(), () => groups.removeMember(t.orgA, id, t.deviceA1))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.removeMember(t.orgA, id, t.deviceA1))).toBe(0);
    expect(await membersOf(id)).toEqual([t.deviceA2]);
  });

  it('renames a group, makes it organization-wide, and deletes it', async () => {
    const id = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: t.siteA2, name: 'to change' }));
    expect(await m.as(asAdminA(), () => groups.update(id, { name: 'changed' }))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.find(id, null))).toMatchObject({ name: 'changed', siteId: t.siteA2 });
    expect(await m.as(asAdminA(), () => groups.update(id, { siteId: null }))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.find(id, null))).toMatchObject({ name: 'changed', siteId: null });
    expect(await m.as(asAdminA(), () => groups.delete(id))).toBe(1);
    expect(await m.as(asAdminA(), () => groups.find(id, null))).toBeNull();
  });

  it('shows a group’s members only in the given sites, and a site-restricted caller only its sites’ members', async () => {
    const id = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: t.siteA1, name: 'mixed sites' }));
    await m.as(asAdminA(), () => groups.addMembers(t.orgA, id, [t.deviceA1, t.deviceA2]));
    expect((await m.as(asAdminA(), () => groups.find(id, null)))!.deviceIds).toEqual(sorted(t.deviceA1, t.deviceA2));
    expect((await m.as(asAdminA(), () => groups.find(id, [t.siteA1])))!.deviceIds).toEqual([t.deviceA1]);
    expect((await m.as(asSiteUserA1(), () => groups.find(id, null)))!.deviceIds).toEqual([t.deviceA1]);
    expect((await m.as(asSiteUserA1(), () => groups.list({ siteIds: [t.siteA1] }))).find((g) => g.id === id)!.deviceIds).toEqual([t.deviceA1]);
  });

  it('keeps organization-wide groups and other sites’ groups out of a site-restricted caller’s reach', async () => {
    const wide = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: null, name: 'wide for restricted' }));
    const a2 = await m.as(asAdminA(), () => groups.insert({ orgId: t.orgA, siteId: t.siteA2, name: 'a2 for restricted' }));
    const seen = (await m.as(asSiteUserA1(), () => groups.list({ orgId: t.orgA, siteIds: null }))).map((g) => g.siteId);
    expect(new Set(seen)).toEqual(new Set([t.siteA1]));
    expect(await m.as(asSiteUserA1(), () => groups.find(wide, null))).toBeNull();
    expect(await m.as(asSiteUserA1(), () => groups.update(a2, { name: 'hijacked' }))).toBe(0);
    expect(await m.as(asSiteUserA1(), () => groups.delete(a2))).toBe(0);
    await expect(m.as(asSiteUserA1(), () => groups.insert({ orgId: t.orgA, siteId: null, name: 'planted wide' }))).rejects.toThrow(/row-level security/);
    await expect(m.as(asSiteUserA1(), () => groups.insert({ orgId: t.orgA, siteId: t.siteA2, name: 'planted a2' }))).rejects.toThrow(/row-level security/);
  });

  it('finds among given devices only those of the organization the caller sees', async () => {
    const found = await m.as(asAdminA(), () => groups.devicesInOrg(t.orgA, [t.deviceA1, t.deviceX1, t.deviceB1]));
    expect(found).toEqual([{ id: t.deviceA1, siteId: t.siteA1 }]);
    expect(await m.as(asAdminA(), () => groups.devicesInOrg(t.orgB, [t.deviceB1]))).toEqual([]);
    expect(await m.as(asSiteUserA1(), () => groups.devicesInOrg(t.orgA, [t.deviceA1, t.deviceA2]))).toEqual([{ id: t.deviceA1, siteId: t.siteA1 }]);
  });

  it('neither shows, changes nor fills another tenant’s group, and never lists its devices as members', async () => {
    const theirs = await m.as(asAdminB(), () => groups.insert({ orgId: t.orgB, siteId: null, name: 'B group' }));
    await m.as(asAdminB(), () => groups.addMembers(t.orgB, theirs, [t.deviceB1]));
    expect(await m.as(asAdminA(), () => groups.find(theirs, null))).toBeNull();
    expect(await m.as(asAdminA(), () => groups.list({ orgId: t.orgB, siteIds: null }))).toEqual([]);
    expect(await m.as(asAdminA(), () => groups.update(theirs, { name: 'hijacked' }))).toBe(0);
    expect(await m.as(asAdminA(), () => groups.delete(theirs))).toBe(0);
    expect(await m.as(asAdminA(), () => groups.removeMember(t.orgB, theirs, t.deviceB1))).toBe(0);
    await expect(m.as(asAdminA(), () => groups.addMembers(t.orgB, theirs, [t.deviceB1]))).rejects.toThrow(/row-level security/);
    await expect(m.as(asAdminA(), () => groups.insert({ orgId: t.orgB, siteId: null, name: 'planted' }))).rejects.toThrow(/row-level security/);
    expect(await m.as(asAdminB(), () => groups.find(theirs, null))).toMatchObject({ name: 'B group', deviceIds: [t.deviceB1] });
  });
});
