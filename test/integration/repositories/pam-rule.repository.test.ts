import { PamRuleRepository } from '../../../src/modules/pam/rules/pam-rule.repository';
import { RulesVersionRepository } from '../../../src/modules/pam/rules/rules-version.repository';
import { newRuleWrite } from '../../../src/modules/pam/rules/rule-write.util';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** PAM rules: the evaluation-order list, the compile source, writes, and the per-organization rules version. */
describe('PamRuleRepository and RulesVersionRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let rules: PamRuleRepository;
  let versions: RulesVersionRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });

  beforeAll(async () => {
    m = await startMedium([PamRuleRepository, RulesVersionRepository]);
    rules = m.get(PamRuleRepository);
    versions = m.get(RulesVersionRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('stores a rule with its normalised criteria and lists the organization’s rules by priority, then creation', async () => {
    const low = await m.as(asAdminA(), () => rules.insert(t.orgA, t.adminA, newRuleWrite({ name: 'low', verdict: 'auto_deny', priority: 500, matchHash: 'AB'.repeat(32) })));
    const high = await m.as(asAdminA(), () =>
      rules.insert(t.orgA, t.adminA, newRuleWrite({ name: 'high', verdict: 'auto_approve', priority: 10, siteId: t.siteA1, timeWindow: { start: '08:00', end: '18:00', days: [5, 1, 1] } })),
    );
    const tie = await m.as(asAdminA(), () => rules.insert(t.orgA, null, newRuleWrite({ name: 'tie', verdict: 'require_approval', priority: 500, matchNegate: ['hash'], matchHash: '0'.repeat(64) })));
    expect(low).toMatchObject({ org_id: t.orgA, created_by: t.adminA, match_hash: 'ab'.repeat(32), enabled: true });
    expect(high.time_window).toEqual({ start: '08:00', end: '18:00', days: [1, 5], timezone: 'UTC' });
    expect(tie.match_negate).toEqual(['hash']);
    const listed = await m.as(asAdminA(), () => rules.listOf([t.orgA]));
    expect(listed.map((r) => r.name)).toEqual(['high', 'low', 'tie']);
  });

  it('compiles from enabled rules only, with the signer lists of the groups they reference', async () => {
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO pam_signer_groups (org_id, name, signers) VALUES ($1, 'vendors', '{Acme Corp,Contoso}'), ($1, 'unused', '{Nobody}') RETURNING id`,
      [t.orgA2],
    );
    const [used, unused] = rows.map((r) => r.id);
    const asTech = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
    await m.as(asTech, async () => {
      await rules.insert(t.orgA2, t.tech, newRuleWrite({ name: 'grouped', verdict: 'auto_approve', matchSignerGroupId: used }));
      await rules.insert(t.orgA2, t.tech, newRuleWrite({ name: 'off', verdict: 'auto_approve', enabled: false, matchSignerGroupId: unused }));
    });
    const source = await m.as(asTech, () => rules.compileSource(t.orgA2));
    expect(source.rules.map((r) => r.name)).toEqual(['grouped']);
    expect(source.rules[0].created_at).toBeInstanceOf(Date);
    expect(source.groups).toEqual([{ id: used, signers: ['Acme Corp', 'Contoso'] }]);
  });

  it('updates and deletes a rule of the caller’s organization', async () => {
    const rule = await m.as(asAdminA(), () => rules.insert(t.orgA, t.adminA, newRuleWrite({ name: 'to change', verdict: 'auto_deny' })));
    const changed = await m.as(asAdminA(), () => rules.update(rule.id, newRuleWrite({ name: 'changed', verdict: 'ignore', matchUser: '  CORP\\bob ' })));
    expect(changed).toMatchObject({ id: rule.id, name: 'changed', verdict: 'ignore', match_user: 'CORP\\bob' });
    expect(changed.updated_at.getTime()).toBeGreaterThanOrEqual(rule.updated_at.getTime());
    expect(await m.as(asAdminA(), () => rules.delete(rule.id))).toBe(1);
    expect(await m.as(asAdminA(), () => rules.find(rule.id))).toBeNull();
  });

  it('never shows, changes or deletes another tenant’s rule, and refuses to write one into its organization', async () => {
    const theirs = await m.as(asAdminB(), () => rules.insert(t.orgB, t.adminB, newRuleWrite({ name: 'B only', verdict: 'auto_approve' })));
    expect(await m.as(asAdminA(), () => rules.find(theirs.id))).toBeNull();
    expect(await m.as(asAdminA(), () => rules.listOf([t.orgA, t.orgB]))).not.toContainEqual(expect.objectContaining({ id: theirs.id }));
    expect(await m.as(asAdminA(), () => rules.compileSource(t.orgB))).toEqual({ rules: [], groups: [] });
    expect(await m.as(asAdminA(), () => rules.delete(theirs.id))).toBe(0);
    await expect(m.as(asAdminA(), () => rules.insert(t.orgB, t.adminA, newRuleWrite({ name: 'planted', verdict: 'auto_approve' })))).rejects.toThrow(/row-level security/);
    expect(await m.as(asAdminA(), () => rules.siteBelongsToOrg(t.orgB, t.siteB1))).toBe(false);
    expect(await m.as(asAdminB(), () => rules.find(theirs.id))).toMatchObject({ name: 'B only' });
  });

  it('reads tier-pinned enabled rules only within the caller’s tenants', async () => {
    await m.as(asAdminB(), () => rules.insert(t.orgB, t.adminB, newRuleWrite({ name: 'B tier', verdict: 'auto_deny', matchToolName: 'run_script', matchRiskTier: 4 })));
    await m.as(asAdminA(), () => rules.insert(t.orgA, t.adminA, newRuleWrite({ name: 'A tier', verdict: 'auto_deny', matchToolName: 'run_script', matchRiskTier: 3 })));
    const seen = await m.as(asAdminA(), () => rules.enabledTierPinned());
    expect(seen.map((r) => r.name)).toEqual(['A tier']);
  });

  it('counts rules versions per organization from 0, and a bump is seen by its organization only', async () => {
    expect(await m.as(asAdminA(), () => versions.current(t.orgA))).toBe('0');
    expect(await m.as(asAdminA(), () => versions.bump(t.orgA))).toBe('1');
    expect(await m.as(asAdminA(), () => versions.bump(t.orgA))).toBe('2');
    const map = await m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2]), () => versions.currentOf([t.orgA, t.orgA2]));
    expect(Object.fromEntries(map)).toEqual({ [t.orgA]: '2', [t.orgA2]: '0' });
    expect(await m.as(asAdminB(), () => versions.current(t.orgA))).toBe('0');
  });
});
