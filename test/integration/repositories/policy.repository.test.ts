import { PolicyAssignmentEntity, PolicyEntity } from '../../../src/modules/policies/policy.entity';
import { PolicyRepository, type AssignmentWrite } from '../../../src/modules/policies/policy.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Policies and their assignments: jsonb features read back, the list and level orders, and the target lookup. */
describe('PolicyRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let policies: PolicyRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const policy = (over: Partial<Parameters<PolicyRepository['insert']>[0]> = {}) => ({
    partnerId: null,
    orgId: t.orgA,
    type: 'configuration' as const,
    name: 'policy',
    description: null,
    enabled: true,
    features: {},
    ...over,
  });
  const assignment = (policyId: string, over: Partial<AssignmentWrite>): AssignmentWrite => ({
    partnerId: t.partnerP,
    orgId: t.orgA,
    policyId,
    level: 'organization',
    siteId: null,
    groupId: null,
    deviceId: null,
    priority: 100,
    ...over,
  });

  beforeAll(async () => {
    m = await startMedium([PolicyRepository], {}, { entities: [PolicyEntity, PolicyAssignmentEntity] });
    policies = m.get(PolicyRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('answers the features as PostgreSQL stores them, whatever key order was written', async () => {
    const created = await m.as(asAdminA(), () => policies.insert(policy({ name: 'jsonb', features: { firewall: { profiles: ['domain'], enabled: true }, av: { scan: 'daily' } } })));
    expect(JSON.stringify(created.features)).toBe('{"av":{"scan":"daily"},"firewall":{"enabled":true,"profiles":["domain"]}}');
    const updated = await m.as(asAdminA(), () => policies.update(created.id, { name: 'jsonb', description: 'd', enabled: false, features: { patching: { window: 'sun', reboot: false } } }));
    expect(JSON.stringify(updated!.features)).toBe('{"patching":{"reboot":false,"window":"sun"}}');
    expect(updated).toMatchObject({ description: 'd', enabled: false });
  });

  it('lists by type, then name without regard to case, the partner’s before an organization’s of the same name', async () => {
    const own = await m.as(asAdminA(), () => policies.insert(policy({ name: 'Baseline' })));
    const shared = await m.as(asTech(), () => policies.insert(policy({ partnerId: t.partnerP, orgId: null, name: 'baseline' })));
    const alpha = await m.as(asAdminA(), () => policies.insert(policy({ name: 'alpha' })));
    const patch = await m.as(asAdminA(), () => policies.insert(policy({ name: 'Aardvark', type: 'patch' })));
    const ids = (await m.as(asAdminA(), () => policies.list({ orgId: t.orgA }))).map((p) => p.id).filter((id) => [own.id, shared.id, alpha.id, patch.id].includes(id));
    expect(ids).toEqual([alpha.id, shared.id, own.id, patch.id]);
    expect((await m.as(asAdminA(), () => policies.list({ orgId: t.orgA, type: 'patch' }))).map((p) => p.id)).toEqual([patch.id]);
    expect((await m.as(asAdminA(), () => policies.list({ scope: 'partner' }))).map((p) => p.id)).toEqual([shared.id]);
  });

  it('orders a policy’s assignments from the partner level down to devices, then by priority', async () => {
    const shared = await m.as(asTech(), () => policies.insert(policy({ partnerId: t.partnerP, orgId: null, name: 'levels' })));
    const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, site_id, name) VALUES ($1, $2, 'levels ' || $3) RETURNING id`, [t.orgA, t.siteA1, t.label]);
    const writes: AssignmentWrite[] = [
      assignment(shared.id, { level: 'device', deviceId: t.deviceA1, priority: 1 }),
      assignment(shared.id, { level: 'site', siteId: t.siteA2, priority: 50 }),
      assignment(shared.id, { level: 'device_group', groupId: rows[0].id }),
      assignment(shared.id, { level: 'site', siteId: t.siteA1, priority: 10 }),
      assignment(shared.id, { level: 'partner', orgId: null }),
      assignment(shared.id, { level: 'organization' }),
    ];
    for (const w of writes) await m.as(asTech(), () => policies.insertAssignment(w));
    const listed = await m.as(asTech(), () => policies.assignments(shared.id));
    expect(listed.map((a) => [a.targetLevel, a.siteId ?? a.deviceGroupId ?? a.deviceId])).toEqual([
      ['partner', null],
      ['organization', null],
      ['site', t.siteA1],
      ['site', t.siteA2],
      ['device_group', rows[0].id],
      ['device', t.deviceA1],
    ]);
    const one = listed[2];
    expect(await m.as(asTech(), () => policies.findAssignment(shared.id, one.id))).toMatchObject({ id: one.id, priority: 10, createdAt: expect.any(Date) });
    expect(await m.as(asTech(), () => policies.deleteAssignment(one.id))).toBe(1);
    expect(await m.as(asTech(), () => policies.findAssignment(shared.id, one.id))).toBeNull();
  });

  it('finds the organization of a target the caller sees, and nothing for a device of a site it does not reach', async () => {
    expect(await m.as(asAdminA(), () => policies.targetOrg('site', t.siteA2))).toEqual({ org_id: t.orgA, partner_id: t.partnerP, site_id: t.siteA2 });
    expect(await m.as(asAdminA(), () => policies.targetOrg('device', t.deviceA2))).toEqual({ org_id: t.orgA, partner_id: t.partnerP, site_id: t.siteA2 });
    expect(await m.as(asAdminA(), () => policies.targetOrg('organization', t.orgA))).toEqual({ org_id: t.orgA, partner_id: t.partnerP, site_id: null });
    expect(await m.as(asSiteUserA1(), () => policies.targetOrg('device', t.deviceA2))).toBeNull();
    expect(await m.as(asSiteUserA1(), () => policies.targetOrg('device', t.deviceA1))).toEqual({ org_id: t.orgA, partner_id: t.partnerP, site_id: t.siteA1 });
    for (const [level, id] of [
      ['organization', t.orgB],
      ['site', t.siteB1],
      ['device', t.deviceB1],
    ] as const) {
      expect(await m.as(asAdminA(), () => policies.targetOrg(level, id))).toBeNull();
    }
  });

  it('neither shows, changes nor assigns another tenant’s policy, and refuses assignments into another tenant', async () => {
    const theirs = await m.as(asAdminB(), () => policies.insert(policy({ orgId: t.orgB, name: 'B policy', features: { a: 1 } })));
    const theirAssignment = await m.as(asAdminB(), () => policies.insertAssignment(assignment(theirs.id, { partnerId: t.partnerQ, orgId: t.orgB })));
    expect(await m.as(asAdminA(), () => policies.find(theirs.id))).toBeNull();
    expect(await m.as(asAdminA(), () => policies.list({ orgId: t.orgB }))).toEqual([]);
    expect(await m.as(asAdminA(), () => policies.update(theirs.id, { name: 'hijacked', description: null, enabled: false, features: {} }))).toBeNull();
    expect(await m.as(asAdminA(), () => policies.delete(theirs.id))).toBe(0);
    expect(await m.as(asAdminA(), () => policies.assignments(theirs.id))).toEqual([]);
    expect(await m.as(asAdminA(), () => policies.deleteAssignment(theirAssignment.id))).toBe(0);
    await expect(m.as(asAdminA(), () => policies.insertAssignment(assignment(theirs.id, { partnerId: t.partnerQ, orgId: t.orgB, level: 'site', siteId: t.siteB1 })))).rejects.toThrow(
      /row-level security/,
    );
    await expect(m.as(asAdminA(), () => policies.insert(policy({ orgId: t.orgB, name: 'planted' })))).rejects.toThrow(/row-level security/);
    expect((await m.owner.query(`SELECT name, enabled, features FROM policies WHERE org_id = $1`, [t.orgB])).rows).toEqual([{ name: 'B policy', enabled: true, features: { a: 1 } }]);
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM policy_assignments WHERE policy_id = $1`, [theirs.id])).rows[0].n).toBe(1);
  });

  it('lets only a partner-wide caller change a partner’s policy, and never shows it to another partner', async () => {
    const shared = await m.as(asTech(), () => policies.insert(policy({ partnerId: t.partnerP, orgId: null, name: 'partner only' })));
    expect(await m.as(asAdminA(), () => policies.find(shared.id))).toMatchObject({ name: 'partner only' });
    expect(await m.as(asAdminA(), () => policies.update(shared.id, { name: 'hijacked', description: null, enabled: false, features: {} }))).toBeNull();
    expect(await m.as(asAdminA(), () => policies.delete(shared.id))).toBe(0);
    expect(await m.as(asAdminB(), () => policies.find(shared.id))).toBeNull();
    expect(await m.as(asTech(), () => policies.delete(shared.id))).toBe(1);
  });
});
