import { randomBytes } from 'node:crypto';
import { FlowRepository } from '../../../src/modules/pam/flows/flow.repository';
import { ElevationIntakeRepository } from '../../../src/modules/pam/requests/elevation-intake.repository';
import type { FiledElevationRequest } from '../../../src/modules/pam/requests/elevation-intake.types';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * What the JIT and tool-action flows read before deciding (the device, on the transaction's clock,
 * and the caller's name), and the row they file, which PAM's ElevationIntakeRepository creates for
 * them. All as the request role, under row-level security and the site scope.
 */
describe('FlowRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: FlowRepository;
  let intake: ElevationIntakeRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });

  const apiKey = async (orgId: string, name: string) =>
    (
      await m.owner.query<{ id: string }>(`INSERT INTO api_keys (org_id, name, key_prefix, key_hash) VALUES ($1, $2, 'rmm_x', $3) RETURNING id`, [
        orgId,
        name,
        randomBytes(32).toString('hex'),
      ])
    ).rows[0].id;

  beforeAll(async () => {
    m = await startMedium([FlowRepository, ElevationIntakeRepository]);
    repo = m.get(FlowRepository);
    intake = m.get(ElevationIntakeRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('device', () => {
    it('reads a device of the caller’s organization with its site, status and the transaction’s clock', async () => {
      const device = await m.as(asAdminA(), () => repo.device(t.deviceA1));
      expect(device).toEqual({ id: t.deviceA1, org_id: t.orgA, site_id: t.siteA1, status: 'active', now: expect.any(Date) });
    });

    it('gives every read of one transaction the same instant, the one the request is filed at', async () => {
      const [first, second] = await m.as(asAdminA(), async () => [await repo.device(t.deviceA1), await repo.device(t.deviceA2)]);
      expect(second!.now.getTime()).toBe(first!.now.getTime());
    });

    it('reads a decommissioned device as such, for the flow to refuse it', async () => {
      await m.owner.query(`UPDATE devices SET status = 'decommissioned' WHERE id = $1`, [t.deviceX1]);
      expect(await m.as(orgPrincipal(t.orgA2), () => repo.device(t.deviceX1))).toMatchObject({ id: t.deviceX1, org_id: t.orgA2, status: 'decommissioned' });
    });

    it('reads the devices of every organization a partner technician reaches', async () => {
      const tech = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
      expect(await m.as(tech, () => repo.device(t.deviceA2))).toMatchObject({ org_id: t.orgA, site_id: t.siteA2 });
      expect(await m.as(tech, () => repo.device(t.deviceX1))).toMatchObject({ org_id: t.orgA2, site_id: t.siteX1 });
    });

    it('finds no device of another tenant, and none that does not exist', async () => {
      expect(await m.as(asAdminA(), () => repo.device(t.deviceB1))).toBeNull();
      expect(await m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2]), () => repo.device(t.deviceB1))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.device('00000000-0000-4000-8000-000000000000'))).toBeNull();
    });

    it('hides a device of another site from a site-restricted caller (the service reads with every site to answer 403)', async () => {
      const siteUser = orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
      expect(await m.as(siteUser, () => repo.device(t.deviceA1))).toMatchObject({ id: t.deviceA1 });
      expect(await m.as(siteUser, () => repo.device(t.deviceA2))).toBeNull();
    });
  });

  describe('subjectName', () => {
    it('names a user by email', async () => {
      expect(await m.as(asAdminA(), () => repo.subjectName(t.adminA, null))).toBe(t.emails.adminA);
    });

    it('names an API key caller by the key’s name, and prefers the user when both are given', async () => {
      const key = await apiKey(t.orgA, `deploy bot ${t.label}`);
      expect(await m.as(orgPrincipal(t.orgA), () => repo.subjectName(null, key))).toBe(`API key deploy bot ${t.label}`);
      expect(await m.as(asAdminA(), () => repo.subjectName(t.adminA, key))).toBe(t.emails.adminA);
    });

    it('has no name for no caller, an unknown one, another tenant’s user or another tenant’s API key', async () => {
      const theirs = await apiKey(t.orgB, `their bot ${t.label}`);
      expect(await m.as(asAdminA(), () => repo.subjectName(null, null))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.subjectName('00000000-0000-4000-8000-000000000000', null))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.subjectName(t.adminB, null))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.subjectName(null, theirs))).toBeNull();
    });
  });

  describe('the filed request (ElevationIntakeRepository.insertFiled)', () => {
    const filed = (over: Partial<FiledElevationRequest> = {}): FiledElevationRequest => ({
      orgId: t.orgA,
      siteId: t.siteA1,
      deviceId: t.deviceA1,
      flowType: 'tech_jit_admin',
      status: 'pending',
      subjectUsername: t.emails.adminA,
      subjectUserId: t.adminA,
      reason: 'patch the print server',
      toolName: null,
      toolAction: null,
      riskTier: null,
      actionDigest: null,
      durationMinutes: 60,
      decisionSource: null,
      matchedPolicyId: null,
      matchedPolicyName: null,
      pamRuleId: null,
      pamRuleName: null,
      ...over,
    });
    const stored = async (id: string) =>
      (
        await m.owner.query(
          `SELECT flow_type, status, subject_username, subject_user_id, reason, tool_name, tool_action, risk_tier, action_digest, duration_minutes,
                  decision_source, pam_rule_name, requested_at, decided_at, expires_at
             FROM elevation_requests WHERE id = $1`,
          [id],
        )
      ).rows[0];

    it('files a pending JIT request with the window asked for, undecided and with no expiry yet', async () => {
      const created = await m.as(asAdminA(), () => intake.insertFiled(filed()));
      expect(created).toEqual({ id: expect.any(String), expires_at: null });
      expect(await stored(created.id)).toMatchObject({
        flow_type: 'tech_jit_admin',
        status: 'pending',
        subject_username: t.emails.adminA,
        subject_user_id: t.adminA,
        reason: 'patch the print server',
        tool_name: null,
        duration_minutes: 60,
        decision_source: null,
        decided_at: null,
        expires_at: null,
      });
    });

    it('opens an auto-approved tool action’s window at the request time, decided then, with the tool and its digest', async () => {
      const created = await m.asOpened(orgPrincipal(t.orgA), () =>
        intake.insertFiled(
          filed({
            flowType: 'ai_tool_action',
            status: 'auto_approved',
            subjectUserId: null,
            subjectUsername: 'API key bot',
            toolName: 'run_script',
            toolAction: 'restart',
            riskTier: 2,
            actionDigest: 'ab'.repeat(32),
            durationMinutes: 15,
            decisionSource: 'pam_rule',
            pamRuleName: 'tools',
          }),
        ),
      );
      const row = await stored(created.id);
      expect(row).toMatchObject({ flow_type: 'ai_tool_action', tool_name: 'run_script', tool_action: 'restart', risk_tier: 2, action_digest: 'ab'.repeat(32), decision_source: 'pam_rule', pam_rule_name: 'tools' });
      expect(row.decided_at.getTime()).toBe(row.requested_at.getTime());
      expect(row.expires_at.getTime() - row.requested_at.getTime()).toBe(15 * 60_000);
      expect(created.expires_at!.getTime()).toBe(row.expires_at.getTime());
    });

    it('files a denied request decided at once, with no window whatever the duration', async () => {
      const created = await m.as(asAdminA(), () => intake.insertFiled(filed({ status: 'denied', durationMinutes: null, decisionSource: 'org_default' })));
      const row = await stored(created.id);
      expect(row).toMatchObject({ status: 'denied', decision_source: 'org_default', expires_at: null, duration_minutes: null });
      expect(row.decided_at).toBeInstanceOf(Date);
      expect(created.expires_at).toBeNull();
    });

    it('refuses to file a request into another tenant, or into a site the caller is restricted away from, and stores nothing', async () => {
      const count = async (deviceId: string) => Number((await m.owner.query(`SELECT count(*) FROM elevation_requests WHERE device_id = $1`, [deviceId])).rows[0].count);
      await expect(m.as(asAdminA(), () => intake.insertFiled(filed({ orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 })))).rejects.toThrow(/row-level security/);
      expect(await count(t.deviceB1)).toBe(0);
      const siteUser = orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
      const before = await count(t.deviceA2);
      await expect(m.as(siteUser, () => intake.insertFiled(filed({ siteId: t.siteA2, deviceId: t.deviceA2, subjectUserId: t.siteUserA1 })))).rejects.toThrow(/row-level security/);
      expect(await count(t.deviceA2)).toBe(before);
    });
  });
});
