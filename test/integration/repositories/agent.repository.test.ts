import { ElevationIngestRepository } from '../../../src/modules/agent/elevation-ingest.repository';
import { INGEST_BURST, INGEST_RATE_PER_SECOND } from '../../../src/modules/agent/rate-limit/device-rate-limiter';
import { AgentCommandRepository } from '../../../src/modules/agent/commands/agent-command.repository';
import { ElevationIntakeRepository } from '../../../src/modules/pam/requests/elevation-intake.repository';
import type { ObservedElevationRequest } from '../../../src/modules/pam/requests/elevation-intake.types';
import { ORG_PAM_DEFAULTS } from '../../../src/modules/pam/decision/decision.types';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * What agents call on the hot path: the ingest context and the one-statement insert (request,
 * audit row, `created` event, rate-limit token), and the agent's look-up of one of its commands
 * (the poll and the results are PAM's, device-command.repository.test.ts). An agent runs under its
 * own organization's scope.
 */
describe('agent repositories', () => {
  let m: Medium;
  let t: TenantRows;
  let ingest: ElevationIngestRepository;
  // The insert is PAM's, which owns app_ingest_insert (src/infra/database/table-owners.ts).
  let intake: ElevationIntakeRepository;
  // Only looks commands up: PAM hands them out and records their results (device-command.repository.test.ts).
  let commands: AgentCommandRepository;
  const asAgentA = () => orgPrincipal(t.orgA);

  beforeAll(async () => {
    m = await startMedium([ElevationIngestRepository, ElevationIntakeRepository, AgentCommandRepository]);
    ingest = m.get(ElevationIngestRepository);
    intake = m.get(ElevationIntakeRepository);
    commands = m.get(AgentCommandRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('ElevationIngestRepository', () => {
    const request = (over: Partial<ObservedElevationRequest> = {}): ObservedElevationRequest => ({
      flowType: 'uac_intercept',
      orgId: t.orgA,
      siteId: t.siteA1,
      deviceId: t.deviceA1,
      status: 'pending',
      subjectUsername: 'CORP\\alice',
      targetExecutablePath: 'C:\\Tools\\setup.exe',
      targetExecutableHash: 'cd'.repeat(32),
      targetExecutableSigner: 'Acme Corp',
      parentImage: 'C:\\Windows\\explorer.exe',
      commandLine: 'setup.exe /S',
      pid: 4242,
      observedAt: '2026-01-02T03:04:05Z',
      reason: 'install',
      decisionSource: null,
      durationMinutes: null,
      matchedPolicyId: null,
      matchedPolicyName: null,
      pamRuleId: null,
      pamRuleName: null,
      softwareEvidence: [],
      ...over,
    });
    const ingestBucket = { burst: INGEST_BURST, ratePerSecond: INGEST_RATE_PER_SECOND };
    const log = (details: Record<string, unknown> = { hash: 'cd'.repeat(32) }) => ({ agentId: t.agentA1.id, auditAction: 'pam.elevation.create', details, requestId: 'req-1', ip: '10.0.0.1' });

    it('reads the device’s context with the default verdict when the organization configured none', async () => {
      const ctx = await m.as(asAgentA(), () => ingest.context(t.orgA, t.deviceA1));
      expect(ctx).toMatchObject({ deviceStatus: 'active', siteId: t.siteA1, rulesVersion: '0', defaults: ORG_PAM_DEFAULTS, software: [] });
      expect(Math.abs(ctx!.now.getTime() - Date.now())).toBeLessThan(60_000);
    });

    it('reads the organization’s PAM defaults, rules version and a decommissioned device’s status', async () => {
      await m.owner.query(`INSERT INTO pam_org_config (org_id, default_unmatched_verdict, default_approval_duration_minutes) VALUES ($1, 'auto_deny', 45)`, [t.orgA2]);
      await m.owner.query(`INSERT INTO pam_rules_versions (org_id, version) VALUES ($1, 7)`, [t.orgA2]);
      await m.owner.query(`UPDATE devices SET status = 'decommissioned' WHERE id = $1`, [t.deviceX1]);
      const ctx = await m.as(orgPrincipal(t.orgA2), () => ingest.context(t.orgA2, t.deviceX1));
      expect(ctx).toMatchObject({
        deviceStatus: 'decommissioned',
        siteId: t.siteX1,
        rulesVersion: '7',
        defaults: { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 45 },
      });
    });

    it('has no context for a device of another tenant', async () => {
      expect(await m.as(asAgentA(), () => ingest.context(t.orgB, t.deviceB1))).toBeNull();
      expect(await m.as(asAgentA(), () => ingest.context(t.orgA, t.deviceB1))).toBeNull();
    });

    it('stores a pending request with its audit row and created event in one call, and no window', async () => {
      const created = await m.as(asAgentA(), () => intake.insertObserved(request(), log(), null));
      expect(created).toMatchObject({ id: expect.any(String), expires_at: null });
      const stored = (await m.owner.query(`SELECT status, decided_at, target_executable_signer, pid, observed_at FROM elevation_requests WHERE id = $1`, [created!.id])).rows[0];
      expect(stored).toMatchObject({ status: 'pending', decided_at: null, target_executable_signer: 'Acme Corp', pid: 4242, observed_at: new Date('2026-01-02T03:04:05Z') });
      const audit = (await m.owner.query(`SELECT actor_type, actor_id, action, details, ip, request_id FROM audit_logs WHERE resource_id = $1`, [created!.id])).rows;
      expect(audit).toEqual([{ actor_type: 'agent', actor_id: t.agentA1.id, action: 'pam.elevation.create', details: { hash: 'cd'.repeat(32) }, ip: '10.0.0.1', request_id: 'req-1' }]);
      const events = (await m.owner.query(`SELECT type, from_status, to_status, actor_id FROM pam_elevation_events WHERE elevation_request_id = $1`, [created!.id])).rows;
      expect(events).toEqual([{ type: 'created', from_status: null, to_status: 'pending', actor_id: t.agentA1.id }]);
    });

    it('opens an auto-approval’s window at the request time, decided by the rule that matched', async () => {
      // After the transaction's opening, as in an ingest request (the context is read first): bound parameters.
      const created = await m.asOpened(asAgentA(), () =>
        intake.insertObserved(request({ status: 'auto_approved', decisionSource: 'pam_rule', durationMinutes: 30, pamRuleName: 'vendors', softwareEvidence: [] }), log(), null),
      );
      expect(created!.expires_at!.getTime() - created!.requested_at.getTime()).toBe(30 * 60_000);
      const stored = (await m.owner.query(`SELECT decision_source, pam_rule_name, decided_at IS NOT NULL AS decided FROM elevation_requests WHERE id = $1`, [created!.id])).rows[0];
      expect(stored).toEqual({ decision_source: 'pam_rule', pam_rule_name: 'vendors', decided: true });
    });

    it('spends a token of the device’s bucket, and writes nothing when the bucket is empty', async () => {
      const bucket = (tokens: number) =>
        m.owner.query(
          `INSERT INTO agent_rate_buckets (org_id, device_id, tokens, refilled_at) VALUES ($1, $2, $3, now() + interval '1 hour')
           ON CONFLICT (org_id, device_id) DO UPDATE SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at`,
          [t.orgA, t.deviceA2, tokens],
        );
      const count = async () => Number((await m.owner.query(`SELECT count(*) FROM elevation_requests WHERE device_id = $1`, [t.deviceA2])).rows[0].count);
      const before = await count();
      await bucket(0.5);
      expect(await m.as(asAgentA(), () => intake.insertObserved(request({ siteId: t.siteA2, deviceId: t.deviceA2 }), log(), ingestBucket))).toBeNull();
      expect(await count()).toBe(before);
      await bucket(3);
      expect(await m.as(asAgentA(), () => intake.insertObserved(request({ siteId: t.siteA2, deviceId: t.deviceA2 }), log(), ingestBucket))).not.toBeNull();
      expect(await count()).toBe(before + 1);
      expect((await m.owner.query(`SELECT tokens FROM agent_rate_buckets WHERE device_id = $1`, [t.deviceA2])).rows[0].tokens).toBe(2);
    });

    it('refuses to store a request into another tenant', async () => {
      await expect(m.as(asAgentA(), () => intake.insertObserved(request({ orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 }), log(), null))).rejects.toThrow(
        /row-level security/,
      );
      expect(Number((await m.owner.query(`SELECT count(*) FROM elevation_requests WHERE device_id = $1`, [t.deviceB1])).rows[0].count)).toBe(0);
    });
  });

  describe('AgentCommandRepository', () => {
    const queue = async (orgId: string, deviceId: string, siteId: string) => {
      const req = await insertRequest(m.owner, { orgId, siteId, deviceId, status: 'actuating' });
      return (
        await m.owner.query<{ id: string }>(
          `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id) VALUES ($1, $2, 'revoke_elevation', jsonb_build_object('elevationRequestId', $3::uuid), $3) RETURNING id`,
          [orgId, deviceId, req],
        )
      ).rows[0].id;
    };

    it('finds a command of its own device with the status PAM gave it, and none of another device', async () => {
      const id = await queue(t.orgA, t.deviceA1, t.siteA1);
      await m.owner.query(`UPDATE device_commands SET status = 'completed', completed_at = now() WHERE id = $1`, [id]);
      expect(await m.as(asAgentA(), () => commands.find(t.orgA, t.deviceA1, id))).toMatchObject({ id, status: 'completed', type: 'revoke_elevation', payload: { elevationRequestId: expect.any(String) } });
      expect(await m.as(asAgentA(), () => commands.find(t.orgA, t.deviceA2, id))).toBeNull();
    });

    it('finds no command of another tenant, which its own agent finds', async () => {
      const id = await queue(t.orgB, t.deviceB1, t.siteB1);
      expect(await m.as(asAgentA(), () => commands.find(t.orgB, t.deviceB1, id))).toBeNull();
      expect(await m.as(orgPrincipal(t.orgB), () => commands.find(t.orgB, t.deviceB1, id))).toMatchObject({ id, status: 'queued' });
    });
  });
});
