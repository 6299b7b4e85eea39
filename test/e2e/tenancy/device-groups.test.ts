import { ownerQuery } from '../../support/test-app';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { DeviceGroupRepository } from '../../../src/modules/tenancy/device-groups/device-group.repository';
import { expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

describe('device groups administration', () => {
  let w: TenancyWorld;
  beforeAll(async () => {
    w = await startTenancyWorld();
  }, 60_000);
  afterAll(() => w.t.close());

  it('lists the groups of the caller organization with their members', async () => {
    const res = await w.as.adminA.get('/device-groups').expect(200);
    expect(res.body).toEqual({
      success: true,
      deviceGroups: [expect.objectContaining({ id: w.ids.groupA1, orgId: w.ids.orgA, siteId: w.ids.siteA1, name: 'Workstations', deviceIds: [w.ids.deviceA1] })],
    });
    expect((await w.as.adminB.get('/device-groups').expect(200)).body.deviceGroups).toEqual([]);
  });

  it('creates, renames, rebinds and deletes a group, auditing each write', async () => {
    const created = await w.as.adminA.post('/device-groups', { name: 'Servers', siteId: w.ids.siteA2 }).expect(201);
    const id = created.body.deviceGroup.id;
    expect(created.body.deviceGroup).toMatchObject({ orgId: w.ids.orgA, siteId: w.ids.siteA2, name: 'Servers', deviceIds: [] });
    const upd = await w.as.adminA.patch(`/device-groups/${id}`, { name: 'All servers', siteId: null }).expect(200);
    expect(upd.body.deviceGroup).toMatchObject({ name: 'All servers', siteId: null });
    await w.as.adminA.get(`/device-groups/${id}`).expect(200);
    expect((await w.as.adminA.delete(`/device-groups/${id}`).expect(200)).body).toEqual({ success: true });
    expectError(await w.as.adminA.get(`/device-groups/${id}`), 404, 'not_found');
    const actions = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [id]);
    expect(actions.map((a) => a.action)).toEqual(['device_group.create', 'device_group.update', 'device_group.delete']);
  });

  it('adds and removes members, refusing devices of another organization', async () => {
    const created = await w.as.adminA.post('/device-groups', { name: 'Members test' }).expect(201);
    const id = created.body.deviceGroup.id;
    const added = await w.as.adminA.post(`/device-groups/${id}/members`, { deviceIds: [w.ids.deviceA1, w.ids.deviceA2] }).expect(201);
    expect(added.body.deviceGroup.deviceIds.sort()).toEqual([w.ids.deviceA1, w.ids.deviceA2].sort());
    // adding again is harmless
    await w.as.adminA.post(`/device-groups/${id}/members`, { deviceIds: [w.ids.deviceA1] }).expect(201);
    expectError(await w.as.adminA.post(`/device-groups/${id}/members`, { deviceIds: [w.ids.deviceB1] }), 404, 'not_found');
    const removed = await w.as.adminA.delete(`/device-groups/${id}/members/${w.ids.deviceA2}`).expect(200);
    expect(removed.body.deviceGroup.deviceIds).toEqual([w.ids.deviceA1]);
    expectError(await w.as.adminA.delete(`/device-groups/${id}/members/${w.ids.deviceA2}`), 404, 'not_found');
    const actions = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [id]);
    expect(actions.map((a) => a.action)).toEqual(['device_group.create', 'device_group.members.add', 'device_group.members.add', 'device_group.members.remove']);
  });

  it('refuses a site of another organization for a group', async () => {
    expectError(await w.as.tech.post('/device-groups', { orgId: w.ids.orgA, siteId: w.ids.siteB1, name: 'Cross' }), 404, 'not_found');
  });

  it('answers another tenant group id with 404 and leaves it untouched', async () => {
    expectError(await w.as.adminB.get(`/device-groups/${w.ids.groupA1}`), 404, 'not_found');
    expectError(await w.as.adminB.patch(`/device-groups/${w.ids.groupA1}`, { name: 'Taken' }), 404, 'not_found');
    expectError(await w.as.adminB.delete(`/device-groups/${w.ids.groupA1}`), 404, 'not_found');
    expectError(await w.as.adminB.post(`/device-groups/${w.ids.groupA1}/members`, { deviceIds: [w.ids.deviceB1] }), 404, 'not_found');
    expect(await ownerQuery(`SELECT 1 FROM device_groups WHERE id = $1 AND name = 'Workstations'`, [w.ids.groupA1])).toHaveLength(1);
  });

  it('needs devices:read to read and devices:write to write', async () => {
    const key = await w.as.adminA.post('/api-keys', { name: 'orgs only', permissions: ['organizations:read'] }).expect(201);
    const res = await w.caller(key.body.key).get('/device-groups');
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('devices:read');
    expectError(await w.as.readerA.post('/device-groups', { name: 'Reader group' }), 403, 'forbidden');
  });

  it('limits a site-restricted user to groups of their site', async () => {
    const orgWide = await w.as.adminA.post('/device-groups', { name: 'Org wide' }).expect(201);
    const a2 = await w.as.adminA.post('/device-groups', { name: 'A2 group', siteId: w.ids.siteA2 }).expect(201);
    const list = await w.as.siteA1.get('/device-groups').expect(200);
    expect(list.body.deviceGroups.map((g: { id: string }) => g.id)).toEqual([w.ids.groupA1]);
    expectError(await w.as.siteA1.get(`/device-groups/${orgWide.body.deviceGroup.id}`), 404, 'not_found');
    expectError(await w.as.siteA1.patch(`/device-groups/${a2.body.deviceGroup.id}`, { name: 'x' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.patch(`/device-groups/${orgWide.body.deviceGroup.id}`, { name: 'x' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post('/device-groups', { name: 'Mine', siteId: w.ids.siteA2 }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post('/device-groups', { name: 'Org wide 2' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post(`/device-groups/${w.ids.groupA1}/members`, { deviceIds: [w.ids.deviceA2] }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.patch(`/device-groups/${w.ids.groupA1}`, { siteId: null }), 403, 'site_access_denied');
    const mine = await w.as.siteA1.post('/device-groups', { name: 'Mine A1', siteId: w.ids.siteA1 }).expect(201);
    expect(mine.body.deviceGroup.siteId).toBe(w.ids.siteA1);
  });

  it('rejects bad input with 400 in the contract shape', async () => {
    expectError(await w.as.adminA.post('/device-groups', { name: 'g'.repeat(256) }), 400, 'validation_failed');
    await w.as.adminA.post('/device-groups', { name: 'g'.repeat(255) }).expect(201);
    expectError(await w.as.adminA.post(`/device-groups/${w.ids.groupA1}/members`, { deviceIds: [] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post(`/device-groups/${w.ids.groupA1}/members`, { deviceIds: ['nope'] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post(`/device-groups/${w.ids.groupA1}/members`, { deviceIds: w.ids.deviceA1 }), 400, 'validation_failed');
    expectError(await w.as.adminA.post(`/device-groups/${w.ids.groupA1}/members`, { deviceIds: [w.ids.deviceA1], extra: 1 }), 400, 'validation_failed');
    expectError(await w.as.adminA.delete(`/device-groups/${w.ids.groupA1}/members/not-a-uuid`), 400, 'invalid_id');
    expectError(await w.as.adminA.raw('patch', `/device-groups/${w.ids.groupA1}`, '{"name":'), 400, 'invalid_json');
    expectError(await w.as.adminA.post('/device-groups', { name: 'Workstations' }), 409, 'name_taken');
  });

  it("gives the entity repository the request's transaction: another organization's groups and members stay hidden and unwritable", async () => {
    const tx = w.t.app.get(TenantTransactionService);
    const repo = w.t.app.get(DeviceGroupRepository);
    const orgB = { scope: 'organization' as const, orgIds: [w.ids.orgB], partnerIds: [], userId: w.ids.adminB };
    const seen = await tx.run(orgB, async () => ({ group: await repo.find(w.ids.groupA1, null), list: await repo.list({ siteIds: null }) }));
    expect(seen.group).toBeNull();
    expect(seen.list.filter((g) => g.orgId !== w.ids.orgB)).toEqual([]);
    expect(await tx.run(orgB, () => repo.update(w.ids.groupA1, { name: 'Hijacked' }))).toBe(0);
    expect(await tx.run(orgB, () => repo.removeMember(w.ids.orgA, w.ids.groupA1, w.ids.deviceA1))).toBe(0);
    expect(await tx.run(orgB, () => repo.delete(w.ids.groupA1))).toBe(0);
    await expect(tx.run(orgB, () => repo.insert({ orgId: w.ids.orgA, siteId: null, name: 'Planted' }))).rejects.toThrow(/row-level security/);
    await expect(tx.run(orgB, () => repo.addMembers(w.ids.orgA, w.ids.groupA1, [w.ids.deviceA2]))).rejects.toThrow(/row-level security/);
    const members = await ownerQuery<{ device_id: string }>(`SELECT device_id FROM device_group_members WHERE group_id = $1`, [w.ids.groupA1]);
    expect(members.map((m) => m.device_id)).toEqual([w.ids.deviceA1]);
    expect(await ownerQuery(`SELECT 1 FROM device_groups WHERE id = $1 AND name = 'Workstations'`, [w.ids.groupA1])).toHaveLength(1);
    expect(await ownerQuery(`SELECT 1 FROM device_groups WHERE org_id = $1 AND name = 'Planted'`, [w.ids.orgA])).toEqual([]);
  });

  it('shows a site-restricted caller only the members of their sites through the entity repository', async () => {
    const tx = w.t.app.get(TenantTransactionService);
    const repo = w.t.app.get(DeviceGroupRepository);
    const orgA = { scope: 'organization' as const, orgIds: [w.ids.orgA], partnerIds: [], userId: w.ids.adminA };
    const group = await tx.run(orgA, async () => {
      const id = await repo.insert({ orgId: w.ids.orgA, siteId: null, name: 'Both sites' });
      expect(await repo.addMembers(w.ids.orgA, id, [w.ids.deviceA1, w.ids.deviceA2])).toBe(2);
      expect(await repo.addMembers(w.ids.orgA, id, [w.ids.deviceA1])).toBe(0);
      return id;
    });
    expect((await tx.run(orgA, () => repo.find(group, null)))?.deviceIds).toEqual([w.ids.deviceA1, w.ids.deviceA2].sort());
    expect((await tx.run(orgA, () => repo.find(group, [w.ids.siteA1])))?.deviceIds).toEqual([w.ids.deviceA1]);
  });
});
