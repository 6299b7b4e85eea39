import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

describe('configuration and patch policies: ownership, features, assignments', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const auth: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    for (const who of ['adminA', 'adminB', 'tech', 'siteA1User']) auth[who] = `Bearer ${await t.token(ids[who], { mfa: true })}`;
    auth.readerA = `Bearer ${await t.token(ids.readerA)}`;
    auth.adminANoMfa = `Bearer ${await t.token(ids.adminA)}`;
  });
  afterAll(() => t.close());

  const create = (who: string, body: object) => request(t.http).post('/api/v1/policies').set('Authorization', auth[who]).send(body);
  const assign = (who: string, policy: string, body: object) => request(t.http).post(`/api/v1/policies/${policy}/assignments`).set('Authorization', auth[who]).send(body);
  const patchFeature = { patch: { schedule: { frequency: 'weekly', dayOfWeek: 'sunday', time: '02:00', timezone: 'America/Chicago' }, rebootBehavior: 'if_required', autoApprove: { critical: true } } };

  it('creates an organization configuration policy with validated features', async () => {
    const res = await create('adminA', { type: 'configuration', name: 'Workstations', features: { agent: { checkInIntervalSeconds: 60 }, monitoring: { cpuThresholdPercent: 95 } } }).expect(201);
    expect(res.body.policy).toMatchObject({ scope: 'organization', orgId: ids.orgA, type: 'configuration', enabled: true, assignments: [], features: { agent: { checkInIntervalSeconds: 60 } } });
    const [audit] = await ownerQuery<{ details: object }>(`SELECT details FROM audit_logs WHERE action = 'policy.create' AND resource_id = $1`, [res.body.policy.id]);
    expect(audit.details).toEqual({ type: 'configuration', name: 'Workstations', features: ['agent', 'monitoring'] });
  });

  it('requires MFA and the policies permissions', async () => {
    expect((await create('adminANoMfa', { type: 'configuration', name: 'x', features: {} }).expect(403)).body.code).toBe('mfa_required');
    await request(t.http).get('/api/v1/policies').set('Authorization', auth.readerA).expect(403);
  });

  it('rejects invalid features with the path of the setting', async () => {
    const bound = await create('adminA', { type: 'configuration', name: 'bad', features: { agent: { checkInIntervalSeconds: 5 } } }).expect(400);
    expect(bound.body.details).toEqual([{ field: 'features.agent.checkInIntervalSeconds', message: 'must be at least 30' }]);
    const unknown = await create('adminA', { type: 'configuration', name: 'bad', features: { teleport: {} } }).expect(400);
    expect(unknown.body.details[0].field).toBe('features.teleport');
    const wrongType = await create('adminA', { type: 'configuration', name: 'bad', features: patchFeature }).expect(400);
    expect(wrongType.body.details[0].field).toBe('features.patch');
    const weekly = await create('adminA', { type: 'patch', name: 'bad', features: { patch: { schedule: { frequency: 'weekly', time: '02:00' } } } }).expect(400);
    expect(weekly.body.details[0].field).toBe('features.patch.schedule.dayOfWeek');
    await create('adminA', { type: 'configuration', name: 'n'.repeat(256), features: {} }).expect(400);
    await create('adminA', { type: 'firewall', name: 'x', features: {} }).expect(400);
  });

  it('lets only the partner own and change partner policies, which every organization reads', async () => {
    const p = (await create('tech', { scope: 'partner', type: 'patch', name: 'Standard patching', features: patchFeature }).expect(201)).body.policy;
    expect(p).toMatchObject({ scope: 'partner', partnerId: ids.partner, orgId: null });
    expect((await create('adminA', { scope: 'partner', type: 'patch', name: 'x', features: patchFeature }).expect(403)).body.code).toBe('partner_scope_required');
    const forB = await request(t.http).get('/api/v1/policies').query({ type: 'patch' }).set('Authorization', auth.adminB).expect(200);
    expect(forB.body.policies.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expect((await request(t.http).patch(`/api/v1/policies/${p.id}`).set('Authorization', auth.adminB).send({ enabled: false }).expect(403)).body.code).toBe('partner_scope_required');
    const off = await request(t.http).patch(`/api/v1/policies/${p.id}`).set('Authorization', auth.tech).send({ enabled: false }).expect(200);
    expect(off.body.policy.enabled).toBe(false);
  });

  it('assigns an organization policy inside its organization only, once per target', async () => {
    const p = (await create('adminA', { type: 'configuration', name: 'Assigned', features: {} }).expect(201)).body.policy;
    await assign('adminA', p.id, { targetType: 'organization', targetId: ids.orgA }).expect(201);
    await assign('adminA', p.id, { targetType: 'site', targetId: ids.siteA1, priority: 10 }).expect(201);
    await assign('adminA', p.id, { targetType: 'device_group', targetId: ids.groupA1 }).expect(201);
    const dev = await assign('adminA', p.id, { targetType: 'device', targetId: ids.deviceA1, priority: 0 }).expect(201);
    expect(dev.body.assignment).toMatchObject({ policyId: p.id, targetType: 'device', targetId: ids.deviceA1, orgId: ids.orgA, priority: 0 });
    expect((await assign('adminA', p.id, { targetType: 'site', targetId: ids.siteA1 }).expect(409)).body.code).toBe('assignment_exists');
    expect((await assign('tech', p.id, { targetType: 'site', targetId: ids.siteB1 }).expect(400)).body.code).toBe('target_not_found');
    expect((await assign('adminA', p.id, { targetType: 'partner', targetId: ids.partner }).expect(400)).body.code).toBe('target_level_not_allowed');
    await assign('adminA', p.id, { targetType: 'site', targetId: ids.siteA2, priority: 10_001 }).expect(400);
    const got = await request(t.http).get(`/api/v1/policies/${p.id}`).set('Authorization', auth.adminA).expect(200);
    expect(got.body.policy.assignments.map((a: { targetType: string }) => a.targetType)).toEqual(['organization', 'site', 'device_group', 'device']);
    await request(t.http).delete(`/api/v1/policies/${p.id}/assignments/${dev.body.assignment.id}`).set('Authorization', auth.adminA).expect(200);
    await request(t.http).delete(`/api/v1/policies/${p.id}/assignments/${dev.body.assignment.id}`).set('Authorization', auth.adminA).expect(404);
    await request(t.http).delete(`/api/v1/policies/${p.id}`).set('Authorization', auth.adminA).expect(200);
    expect(await ownerQuery(`SELECT 1 FROM policy_assignments WHERE policy_id = $1`, [p.id])).toEqual([]);
  });

  it('assigns a partner policy at partner level or in any organization, showing each organization only its own assignments', async () => {
    const p = (await create('tech', { scope: 'partner', type: 'configuration', name: 'Baseline', features: { agent: { autoUpdate: true } } }).expect(201)).body.policy;
    await assign('tech', p.id, { targetType: 'partner', targetId: ids.partner }).expect(201);
    await assign('tech', p.id, { targetType: 'organization', targetId: ids.orgB, priority: 5 }).expect(201);
    await assign('tech', p.id, { targetType: 'device', targetId: ids.deviceA2 }).expect(201);
    expect((await assign('adminA', p.id, { targetType: 'organization', targetId: ids.orgA }).expect(403)).body.code).toBe('partner_scope_required');
    const asB = await request(t.http).get(`/api/v1/policies/${p.id}/assignments`).set('Authorization', auth.adminB).expect(200);
    expect(asB.body.assignments.map((a: { targetType: string }) => a.targetType)).toEqual(['partner', 'organization']);
    const asTech = await request(t.http).get(`/api/v1/policies/${p.id}/assignments`).set('Authorization', auth.tech).expect(200);
    expect(asTech.body.assignments).toHaveLength(3);
    expect((await assign('tech', p.id, { targetType: 'partner', targetId: ids.orgA }).expect(400)).body.code).toBe('target_not_found');
  });

  it('hides another organization\'s policies', async () => {
    const p = (await create('adminA', { type: 'configuration', name: 'Private', features: {} }).expect(201)).body.policy;
    await request(t.http).get(`/api/v1/policies/${p.id}`).set('Authorization', auth.adminB).expect(404);
    await request(t.http).delete(`/api/v1/policies/${p.id}`).set('Authorization', auth.adminB).expect(404);
    expect((await create('adminA', { type: 'configuration', name: 'private', features: {} }).expect(409)).body.code).toBe('name_taken');
    await create('adminA', { type: 'patch', name: 'Private', features: patchFeature }).expect(201);
    expect((await request(t.http).patch(`/api/v1/policies/${p.id}`).set('Authorization', auth.adminA).send({ type: 'patch' }).expect(400)).body.code).toBe('validation_failed');
  });

  it('keeps policy writes from site-restricted users', async () => {
    expect((await create('siteA1User', { type: 'configuration', name: 'Site', features: {} }).expect(403)).body.code).toBe('site_access_denied');
  });

  it('answers a policy byte for byte the same on create, read and update, with its assignments as stored, and lists by type then name without regard to case', async () => {
    const created = await create('adminA', { type: 'configuration', name: 'byte exact', features: { monitoring: { cpuThresholdPercent: 90 }, agent: { checkInIntervalSeconds: 120 } } }).expect(201);
    const path = `/api/v1/policies/${created.body.policy.id}`;
    expect((await request(t.http).get(path).set('Authorization', auth.adminA).expect(200)).text).toBe(created.text);
    const assigned = await assign('adminA', created.body.policy.id, { targetType: 'site', targetId: ids.siteA2, priority: 7 }).expect(201);
    const [stored] = await ownerQuery<{ created_at: Date }>(`SELECT created_at FROM policy_assignments WHERE id = $1`, [assigned.body.assignment.id]);
    expect(assigned.body.assignment).toEqual({
      id: assigned.body.assignment.id,
      policyId: created.body.policy.id,
      targetType: 'site',
      targetId: ids.siteA2,
      orgId: ids.orgA,
      priority: 7,
      createdAt: stored.created_at.toISOString(),
    });
    const updated = await request(t.http).patch(path).set('Authorization', auth.adminA).send({ enabled: false }).expect(200);
    expect(updated.body.policy.assignments).toEqual([assigned.body.assignment]);
    expect((await request(t.http).get(path).set('Authorization', auth.adminA).expect(200)).text).toBe(updated.text);

    await create('adminA', { type: 'configuration', name: 'Byte later', features: {} }).expect(201);
    const listed = (await request(t.http).get('/api/v1/policies').query({ orgId: ids.orgA }).set('Authorization', auth.adminA).expect(200)).body.policies as { type: string; name: string }[];
    const key = (p: { type: string; name: string }) => `${p.type}\u0000${p.name.toLowerCase()}`;
    expect(listed.map(key)).toEqual(listed.map(key).sort());
    expect(listed.map((p) => p.name)).toEqual(expect.arrayContaining(['byte exact', 'Byte later']));
  });
});
