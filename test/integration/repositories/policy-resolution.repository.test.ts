import { randomUUID } from 'node:crypto';
import { PolicyResolutionRepository, type PolicyTarget } from '../../../src/modules/policies/resolution/policy-resolution.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Which assignments of enabled configuration policies carrying a feature reach one device.
 * Device A1 of site A1 is reached at every level: partner P, organization A, site A1, a static
 * group holding it, and itself. Around it stand assignments that must not reach it.
 */
describe('PolicyResolutionRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let resolution: PolicyResolutionRepository;
  const ids: Record<string, string> = {};
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const deviceA1 = (): PolicyTarget => ({ orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1 });
  const policy = async (name: string, owner: { orgId?: string; partnerId?: string }, features: object, over: { enabled?: boolean; type?: string } = {}) => {
    const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO policies (org_id, partner_id, type, name, enabled, features) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, [
      owner.orgId ?? null,
      owner.partnerId ?? null,
      over.type ?? 'configuration',
      name,
      over.enabled ?? true,
      features,
    ]);
    return (ids[name] = rows[0].id);
  };
  const assign = async (policyId: string, partnerId: string, orgId: string | null, level: string, target: { site?: string; group?: string; device?: string } = {}, priority = 100) =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, site_id, device_group_id, device_id, priority) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [partnerId, orgId, policyId, level, target.site ?? null, target.group ?? null, target.device ?? null, priority],
      )
    ).rows[0].id;
  /** [level, policy, priority, settings] by level, then policy. */
  const byLevel = (rows: unknown[][]) => rows.sort((x, y) => `${x[0]} ${x[1]}`.localeCompare(`${y[0]} ${y[1]}`));
  const summary = (applied: Awaited<ReturnType<PolicyResolutionRepository['applied']>>) => byLevel(applied.map((a) => [a.level, a.policyId, a.priority, a.settings]));

  beforeAll(async () => {
    m = await startMedium([PolicyResolutionRepository]);
    resolution = m.get(PolicyResolutionRepository);
    t = await seedTenants(m.owner);
    const group = (await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name) VALUES ($1, 'holds a1') RETURNING id`, [t.orgA])).rows[0].id;
    const otherGroup = (await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name) VALUES ($1, 'holds a2') RETURNING id`, [t.orgA])).rows[0].id;
    await m.owner.query(`INSERT INTO device_group_members (org_id, group_id, device_id) VALUES ($1, $2, $3), ($1, $4, $5)`, [t.orgA, group, t.deviceA1, otherGroup, t.deviceA2]);
    await assign(await policy('partner', { partnerId: t.partnerP }, { antivirus: { level: 'partner' } }), t.partnerP, null, 'partner', {}, 10);
    await assign(await policy('org', { orgId: t.orgA }, { antivirus: { level: 'org' }, firewall: { on: true } }), t.partnerP, t.orgA, 'organization', {}, 20);
    await assign(await policy('site', { orgId: t.orgA }, { antivirus: { level: 'site' } }), t.partnerP, t.orgA, 'site', { site: t.siteA1 }, 30);
    await assign(await policy('group', { orgId: t.orgA }, { antivirus: { level: 'group' } }), t.partnerP, t.orgA, 'device_group', { group }, 40);
    await assign(await policy('device', { orgId: t.orgA }, { antivirus: { level: 'device' } }), t.partnerP, t.orgA, 'device', { device: t.deviceA1 }, 50);
    // None of these reaches device A1's antivirus.
    await assign(await policy('other site', { orgId: t.orgA }, { antivirus: {} }), t.partnerP, t.orgA, 'site', { site: t.siteA2 });
    await assign(await policy('other group', { orgId: t.orgA }, { antivirus: {} }), t.partnerP, t.orgA, 'device_group', { group: otherGroup });
    await assign(await policy('other device', { orgId: t.orgA }, { antivirus: {} }), t.partnerP, t.orgA, 'device', { device: t.deviceA2 });
    await assign(await policy('disabled', { orgId: t.orgA }, { antivirus: {} }, { enabled: false }), t.partnerP, t.orgA, 'organization');
    await assign(await policy('patch', { orgId: t.orgA }, { antivirus: {} }, { type: 'patch' }), t.partnerP, t.orgA, 'organization');
    await assign(await policy('firewall only', { orgId: t.orgA }, { firewall: { on: false } }), t.partnerP, t.orgA, 'organization');
    await assign(await policy('sibling org', { orgId: t.orgA2 }, { antivirus: {} }), t.partnerP, t.orgA2, 'organization');
    await assign(await policy('partner q', { partnerId: t.partnerQ }, { antivirus: {} }), t.partnerQ, null, 'partner');
    await assign(await policy('org b', { orgId: t.orgB }, { antivirus: {} }), t.partnerQ, t.orgB, 'organization');
  });
  afterAll(() => m.close());

  it('answers every level through which a policy carrying the feature reaches the device, with its settings', async () => {
    const applied = await m.as(asAdminA(), () => resolution.applied(deviceA1(), 'antivirus'));
    expect(summary(applied)).toEqual([
      ['device', ids.device, 50, { level: 'device' }],
      ['device_group', ids.group, 40, { level: 'group' }],
      ['organization', ids.org, 20, { level: 'org' }],
      ['partner', ids.partner, 10, { level: 'partner' }],
      ['site', ids.site, 30, { level: 'site' }],
    ]);
    expect(applied.find((a) => a.level === 'site')).toEqual({
      policyId: ids.site,
      policyName: 'site',
      policyUpdatedAt: expect.any(Date),
      level: 'site',
      priority: 30,
      assignedAt: expect.any(Date),
      assignmentId: expect.any(String),
      settings: { level: 'site' },
    });
  });

  it('answers the same whether the statement opens the transaction or follows another', async () => {
    const first = summary(await m.as(asAdminA(), () => resolution.applied(deviceA1(), 'antivirus')));
    expect(summary(await m.asOpened(asAdminA(), () => resolution.applied(deviceA1(), 'antivirus')))).toEqual(first);
    expect(summary(await m.as(asTech(), () => resolution.applied(deviceA1(), 'antivirus')))).toEqual(first);
  });

  it('answers per feature, and nothing for a feature no policy carries', async () => {
    expect(summary(await m.as(asAdminA(), () => resolution.applied(deviceA1(), 'firewall')))).toEqual(
      byLevel([
        ['organization', ids['firewall only'], 100, { on: false }],
        ['organization', ids.org, 20, { on: true }],
      ]),
    );
    expect(await m.as(asAdminA(), () => resolution.applied(deviceA1(), 'nothing-carries-this'))).toEqual([]);
  });

  it('reaches a device of another site only through the levels that hold it', async () => {
    const applied = await m.as(asAdminA(), () => resolution.applied({ orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2 }, 'antivirus'));
    expect(applied.map((a) => a.policyId).sort()).toEqual([ids.partner, ids.org, ids['other site'], ids['other group'], ids['other device']].sort());
  });

  it('answers nothing of another tenant’s policies, nor for a device the caller cannot see', async () => {
    expect(await m.as(asAdminB(), () => resolution.applied(deviceA1(), 'antivirus'))).toEqual([]);
    expect((await m.as(asAdminB(), () => resolution.applied({ orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 }, 'antivirus'))).map((a) => a.policyId).sort()).toEqual(
      [ids['partner q'], ids['org b']].sort(),
    );
    expect(await m.as(asAdminA(), () => resolution.applied({ orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 }, 'antivirus'))).toEqual([]);
    expect((await m.as(asAdminA(), () => resolution.applied({ orgId: t.orgA, siteId: t.siteA1, deviceId: randomUUID() }, 'antivirus'))).map((a) => a.level).sort()).toEqual([
      'organization',
      'partner',
      'site',
    ]);
  });
});
