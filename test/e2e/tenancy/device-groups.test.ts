import { ownerQuery } from '../../support/test-app';
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
});
