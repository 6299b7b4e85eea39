import { randomUUID } from 'node:crypto';
import { DeviceGroupEntity } from '../../../src/modules/tenancy/device-groups/device-group.entity';
import { DynamicDeviceGroupRepository } from '../../../src/modules/tenancy/device-groups/dynamic-device-group.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Dynamic device groups: the database computes their members from the filter in the statement
 * that writes the group, so what is stored in device_group_members is checked after each write.
 * A static group (written as the owner) is never touched through this repository.
 */
describe('DynamicDeviceGroupRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let groups: DynamicDeviceGroupRepository;
  let staticA: string;
  let dynamicB: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const hostnameStarts = (prefix: string) => ({ field: 'hostname', op: 'startsWith', value: prefix });
  const membersOf = async (groupId: string) =>
    (await m.owner.query<{ device_id: string }>(`SELECT device_id FROM device_group_members WHERE group_id = $1 ORDER BY device_id`, [groupId])).rows.map((r) => r.device_id);
  const sorted = (...ids: string[]) => [...ids].sort();

  beforeAll(async () => {
    m = await startMedium([DynamicDeviceGroupRepository], {}, { entities: [DeviceGroupEntity] });
    groups = m.get(DynamicDeviceGroupRepository);
    t = await seedTenants(m.owner);
    staticA = (await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name) VALUES ($1, 'static') RETURNING id`, [t.orgA])).rows[0].id;
    await m.owner.query(`INSERT INTO device_group_members (org_id, group_id, device_id) VALUES ($1, $2, $3)`, [t.orgA, staticA, t.deviceA1]);
    dynamicB = (
      await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name, kind, filter) VALUES ($1, 'b dynamic', 'dynamic', $2) RETURNING id`, [t.orgB, hostnameStarts('WS-')])
    ).rows[0].id;
  });
  afterAll(() => m.close());

  describe('ofOrgs', () => {
    it('answers static and dynamic groups of the organizations asked for, with their filters', async () => {
      const id = randomUUID();
      await m.as(asTech(), () => groups.insert(id, t.orgA2, { siteId: t.siteX1, name: 'x1 hosts', filter: hostnameStarts('WS-X1') }));
      const listed = await m.as(asTech(), () => groups.ofOrgs([t.orgA, t.orgA2]));
      expect(listed.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { id: staticA, org_id: t.orgA, site_id: null, name: 'static', kind: 'static', filter: null },
        { id, org_id: t.orgA2, site_id: t.siteX1, name: 'x1 hosts', kind: 'dynamic', filter: hostnameStarts('WS-X1') },
      ]);
    });

    it('answers nothing for no organizations, nor of another tenant', async () => {
      expect(await m.as(asAdminA(), () => groups.ofOrgs([]))).toEqual([]);
      expect(await m.as(asAdminA(), () => groups.ofOrgs([t.orgB]))).toEqual([]);
    });
  });

  describe('writes', () => {
    it('computes the members of a new group from its filter in the same statement', async () => {
      const id = randomUUID();
      expect(await m.as(asAdminA(), () => groups.insert(id, t.orgA, { siteId: null, name: 'a1 hosts', filter: hostnameStarts('ws-a1') }))).toEqual({ id });
      expect(await membersOf(id)).toEqual([t.deviceA1]);
      expect((await m.owner.query(`SELECT kind, filter FROM device_groups WHERE id = $1`, [id])).rows).toEqual([{ kind: 'dynamic', filter: hostnameStarts('ws-a1') }]);
    });

    it('recomputes the members when the filter or the site changes', async () => {
      const id = randomUUID();
      await m.as(asAdminA(), () => groups.insert(id, t.orgA, { siteId: null, name: 'to change', filter: hostnameStarts('WS-A1') }));
      expect(await m.as(asAdminA(), () => groups.update(id, { siteId: null, name: 'to change', filter: { field: 'hostname', op: 'contains', value: t.label } }))).toBe(1);
      expect(await membersOf(id)).toEqual(sorted(t.deviceA1, t.deviceA2));
      expect(await m.as(asAdminA(), () => groups.update(id, { siteId: t.siteA2, name: 'changed', filter: { field: 'hostname', op: 'contains', value: t.label } }))).toBe(1);
      expect(await membersOf(id)).toEqual([t.deviceA2]);
      expect((await m.owner.query(`SELECT name, site_id FROM device_groups WHERE id = $1`, [id])).rows).toEqual([{ name: 'changed', site_id: t.siteA2 }]);
    });

    it('deletes a dynamic group with its members', async () => {
      const id = randomUUID();
      await m.as(asAdminA(), () => groups.insert(id, t.orgA, { siteId: null, name: 'to delete', filter: hostnameStarts('WS-') }));
      expect(await m.as(asAdminA(), () => groups.delete(id))).toBe(1);
      expect(await m.as(asAdminA(), () => groups.delete(id))).toBe(0);
      expect(await membersOf(id)).toEqual([]);
    });

    it('neither changes nor deletes a static group, nor a group that does not exist', async () => {
      expect(await m.as(asAdminA(), () => groups.update(staticA, { siteId: null, name: 'made dynamic', filter: hostnameStarts('WS-') }))).toBe(0);
      expect(await m.as(asAdminA(), () => groups.delete(staticA))).toBe(0);
      expect((await m.owner.query(`SELECT name, kind, filter FROM device_groups WHERE id = $1`, [staticA])).rows).toEqual([{ name: 'static', kind: 'static', filter: null }]);
      expect(await membersOf(staticA)).toEqual([t.deviceA1]);
      expect(await m.as(asAdminA(), () => groups.update(randomUUID(), { siteId: null, name: 'nothing', filter: hostnameStarts('WS-') }))).toBe(0);
    });

    it('refuses a name the organization already uses, and a filter the database cannot compile', async () => {
      await expect(m.as(asAdminA(), () => groups.insert(randomUUID(), t.orgA, { siteId: null, name: 'static', filter: hostnameStarts('WS-') }))).rejects.toThrow(/duplicate key/);
      const id = randomUUID();
      await expect(m.as(asAdminA(), () => groups.insert(id, t.orgA, { siteId: null, name: 'bad filter', filter: { field: 'serial', op: 'eq', value: 'x' } }))).rejects.toThrow(
        /invalid device filter/,
      );
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM device_groups WHERE id = $1`, [id])).rows[0].n).toBe(0);
    });

    it('neither creates, changes nor deletes a group of another tenant, and keeps a site-restricted caller to its sites', async () => {
      await expect(m.as(asAdminA(), () => groups.insert(randomUUID(), t.orgB, { siteId: null, name: 'planted', filter: hostnameStarts('WS-') }))).rejects.toThrow(/row-level security/);
      expect(await m.as(asAdminA(), () => groups.update(dynamicB, { siteId: null, name: 'hijacked', filter: hostnameStarts('none') }))).toBe(0);
      expect(await m.as(asAdminA(), () => groups.delete(dynamicB))).toBe(0);
      expect((await m.owner.query(`SELECT name FROM device_groups WHERE id = $1`, [dynamicB])).rows).toEqual([{ name: 'b dynamic' }]);
      expect(await membersOf(dynamicB)).toEqual([t.deviceB1]);
      await expect(m.as(asSiteUserA1(), () => groups.insert(randomUUID(), t.orgA, { siteId: t.siteA2, name: 'planted a2', filter: hostnameStarts('WS-') }))).rejects.toThrow(
        /row-level security/,
      );
      const a1 = randomUUID();
      await m.as(asSiteUserA1(), () => groups.insert(a1, t.orgA, { siteId: t.siteA1, name: 'mine', filter: hostnameStarts('WS-') }));
      expect(await membersOf(a1)).toEqual([t.deviceA1]);
    });
  });
});
