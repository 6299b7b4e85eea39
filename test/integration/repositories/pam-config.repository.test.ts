import { PamConfigRepository } from '../../../src/modules/pam/config/pam-config.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** An organization's PAM defaults: one row per organization, written by upsert. */
describe('PamConfigRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: PamConfigRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const stored = async (orgId: string) =>
    (await m.owner.query(`SELECT default_unmatched_verdict, default_approval_duration_minutes, updated_by FROM pam_org_config WHERE org_id = $1`, [orgId])).rows[0];

  beforeAll(async () => {
    m = await startMedium([PamConfigRepository]);
    repo = m.get(PamConfigRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('finds nothing for an organization that never saved its configuration', async () => {
    expect(await m.as(asAdminA(), () => repo.find(t.orgA))).toBeNull();
  });

  it('creates the row with fifteen minutes when no duration is given, then keeps the stored duration when none is given', async () => {
    expect(await m.as(asAdminA(), () => repo.upsert(t.orgA, 'auto_deny', null, t.adminA))).toEqual({
      org_id: t.orgA,
      default_unmatched_verdict: 'auto_deny',
      default_approval_duration_minutes: 15,
    });
    expect(await m.as(asAdminA(), () => repo.upsert(t.orgA, 'auto_deny', 60, t.adminA))).toMatchObject({ default_approval_duration_minutes: 60 });
    expect(await m.as(asAdminA(), () => repo.upsert(t.orgA, 'require_approval', null, null))).toMatchObject({ default_unmatched_verdict: 'require_approval', default_approval_duration_minutes: 60 });
    expect(await stored(t.orgA)).toEqual({ default_unmatched_verdict: 'require_approval', default_approval_duration_minutes: 60, updated_by: null });
    expect(await m.as(asAdminA(), () => repo.find(t.orgA))).toEqual({ org_id: t.orgA, default_unmatched_verdict: 'require_approval', default_approval_duration_minutes: 60 });
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM pam_org_config WHERE org_id = $1`, [t.orgA])).rows[0].n).toBe(1);
  });

  it('refuses a duration outside one minute to a day, and keeps what was stored', async () => {
    await m.as(asAdminA(), () => repo.upsert(t.orgA, 'require_approval', 30, t.adminA));
    await expect(m.as(asAdminA(), () => repo.upsert(t.orgA, 'require_approval', 1441, t.adminA))).rejects.toThrow(/check constraint/);
    await expect(m.as(asAdminA(), () => repo.upsert(t.orgA, 'require_approval', 0, t.adminA))).rejects.toThrow(/check constraint/);
    expect((await stored(t.orgA)).default_approval_duration_minutes).toBe(30);
  });

  it('lets a technician of the partner read and write an organization it reaches', async () => {
    const asTech = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
    expect(await m.as(asTech, () => repo.upsert(t.orgA2, 'auto_deny', 5, t.tech))).toMatchObject({ org_id: t.orgA2, default_approval_duration_minutes: 5 });
    expect(await m.as(asTech, () => repo.find(t.orgA2))).toMatchObject({ default_unmatched_verdict: 'auto_deny' });
  });

  it('neither shows nor writes another tenant’s configuration', async () => {
    await m.as(asAdminA(), () => repo.upsert(t.orgA, 'auto_deny', 45, t.adminA));
    expect(await m.as(asAdminB(), () => repo.find(t.orgA))).toBeNull();
    await expect(m.as(asAdminB(), () => repo.upsert(t.orgA, 'require_approval', 1, t.adminB))).rejects.toThrow(/row-level security/);
    expect(await stored(t.orgA)).toEqual({ default_unmatched_verdict: 'auto_deny', default_approval_duration_minutes: 45, updated_by: t.adminA });
    expect(await m.as(asAdminB(), () => repo.find(t.orgB))).toBeNull();
  });
});
