import { ElevationIngestRepository } from '../../../src/modules/agent/elevation-ingest.repository';
import { INGEST_BURST, INGEST_RATE_PER_SECOND } from '../../../src/modules/agent/rate-limit/device-rate-limiter';
import { AgentCommandRepository } from '../../../src/modules/agent/commands/agent-command.repository';
import { DeviceCommandRepository } from '../../../src/modules/pam/requests/device-command.repository';
import { ElevationIntakeRepository } from '../../../src/modules/pam/requests/elevation-intake.repository';
import type { ObservedElevationRequest } from '../../../src/modules/pam/requests/elevation-intake.types';
import { ORG_PAM_DEFAULTS } from '../../../src/modules/pam/decision/decision.types';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * What agents call on the hot path: the ingest context and the one-statement insert (request,
 * audit row, `created` event, rate-limit token), and the command poll and its results. An agent
 * runs under its own organization's scope.
 */
describe('agent repositories', () => {
  let m: Medium;
  let t: TenantRows;
  let ingest: ElevationIngestRepository;
  // The insert is PAM's, which owns app_ingest_insert (src/infra/database/table-owners.ts).
  let intake: ElevationIntakeRepository;
  let commands: AgentCommandRepository;
  // Results are written by PAM, which owns device_commands (src/infra/database/table-owners.ts).
  let results: DeviceCommandRepository;
  const asAgentA = () => orgPrincipal(t.orgA);

  beforeAll(async () => {
    m = await startMedium([ElevationIngestRepository, ElevationIntakeRepository, AgentCommandRepository, DeviceCommandRepository]);
    ingest = m.get(ElevationIngestRepository);
    intake = m.get(ElevationIntakeRepository);
    commands = m.get(AgentCommandRepository);
    results = m.get(DeviceCommandRepository);
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
    const queue = async (orgId: string, deviceId: string, type: 'actuate_elevation' | 'revoke_elevation', requestId: string, secondsAgo: number) =>
      (
        await m.owner.query<{ id: string }>(
          `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id, created_at)
           VALUES ($1, $2, $3, jsonb_build_object('elevationRequestId', $4::uuid), $4, now() - make_interval(secs => $5)) RETURNING id`,
          [orgId, deviceId, type, requestId, secondsAgo],
        )
      ).rows[0].id;
    const statusOf = async (id: string) => (await m.owner.query(`SELECT status, error FROM device_commands WHERE id = $1`, [id])).rows[0];
    /** Long enough that nothing in these tests is handed out again unless a test moves delivered_at back. */
    const REDELIVER = 3600;
    const deliveredSecondsAgo = (id: string, seconds: number) => m.owner.query(`UPDATE device_commands SET delivered_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, seconds]);

    it('hands out queued commands oldest first, at most the limit, each only once', async () => {
      const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
      const first = await queue(t.orgA, t.deviceA1, 'actuate_elevation', req, 30);
      const second = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 20);
      const third = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 10);
      const page = await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 2, REDELIVER).then((x) => x.commands));
      expect(page.map((c) => [c.id, c.status])).toEqual([
        [first, 'delivered'],
        [second, 'delivered'],
      ]);
      expect(page[0].payload).toEqual({ elevationRequestId: req });
      expect((await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).map((c) => c.id)).toEqual([third]);
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
    });

    it('withdraws a queued actuation whose request is no longer actuating instead of delivering it', async () => {
      const revoked = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2, status: 'revoked' });
      const id = await queue(t.orgA, t.deviceA2, 'actuate_elevation', revoked, 5);
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA2, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
      expect(await statusOf(id)).toEqual({ status: 'failed', error: 'Elevation no longer actuating when the agent fetched the command' });
    });

    it('records a result once, and finds the command with it', async () => {
      const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
      const id = await queue(t.orgA, t.deviceA1, 'actuate_elevation', req, 1);
      await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands));
      expect(await m.as(asAgentA(), () => results.complete(t.orgA, t.deviceA1, id, 'completed', null))).toMatchObject({ id, status: 'completed' });
      expect(await m.as(asAgentA(), () => results.complete(t.orgA, t.deviceA1, id, 'failed', 'late'))).toBeNull();
      expect(await m.as(asAgentA(), () => commands.find(t.orgA, t.deviceA1, id))).toMatchObject({ id, status: 'completed' });
      expect(await m.as(asAgentA(), () => results.complete(t.orgA, t.deviceA2, id, 'failed', 'wrong device'))).toBeNull();
    });

    it('neither hands out, finds nor completes another tenant’s commands', async () => {
      const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, status: 'actuating' });
      const id = await queue(t.orgB, t.deviceB1, 'actuate_elevation', theirs, 1);
      expect(await m.as(asAgentA(), () => commands.take(t.orgB, t.deviceB1, t.agentB1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
      expect(await m.as(asAgentA(), () => commands.find(t.orgB, t.deviceB1, id))).toBeNull();
      expect(await m.as(asAgentA(), () => results.complete(t.orgB, t.deviceB1, id, 'completed', null))).toBeNull();
      expect(await statusOf(id)).toEqual({ status: 'queued', error: null });
    });

    it('hands a delivered command out again once the redelivery time has passed without an acknowledgement, and counts the deliveries', async () => {
      const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
      const id = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 1);
      expect((await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).map((c) => [c.id, c.delivery_count])).toEqual([[id, 1]]);
      const none = await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER));
      expect(none.commands).toEqual([]);
      // Nothing due: the take says when the unacknowledged delivery falls due again (an hour, less the test's own time).
      expect(none.redeliverInMs).toBeGreaterThan((REDELIVER - 600) * 1000);
      expect(none.redeliverInMs).toBeLessThanOrEqual(REDELIVER * 1000);
      await deliveredSecondsAgo(id, REDELIVER + 1);
      expect((await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).map((c) => [c.id, c.delivery_count])).toEqual([[id, 2]]);
    });

    it('never hands out again a command acknowledged, or one whose result is reported', async () => {
      const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
      const acked = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 2);
      const reported = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 1);
      await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands));
      expect(await m.as(asAgentA(), () => results.acknowledge(t.orgA, t.deviceA1, acked))).toEqual({ status: 'delivered' });
      expect(await m.as(asAgentA(), () => results.acknowledge(t.orgA, t.deviceA1, acked))).toEqual({ status: 'delivered' });
      await m.as(asAgentA(), () => results.complete(t.orgA, t.deviceA1, reported, 'completed', null));
      await deliveredSecondsAgo(acked, REDELIVER + 1);
      await deliveredSecondsAgo(reported, REDELIVER + 1);
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
      expect(await m.as(asAgentA(), () => results.acknowledge(t.orgB, t.deviceB1, acked))).toBeNull();
    });

    it('withdraws a delivered, unacknowledged actuation whose request has since been revoked, instead of delivering it again late', async () => {
      const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2, status: 'actuating' });
      const id = await queue(t.orgA, t.deviceA2, 'actuate_elevation', req, 1);
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA2, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toHaveLength(1);
      await m.owner.query(`UPDATE elevation_requests SET status = 'revoked' WHERE id = $1`, [req]);
      await deliveredSecondsAgo(id, REDELIVER + 1);
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA2, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
      expect(await statusOf(id)).toEqual({ status: 'failed', error: 'Elevation no longer actuating when the agent fetched the command' });
    });

    it('hands nothing to an agent of the device whose token has been revoked, nor to another device’s agent', async () => {
      const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
      const id = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 1);
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
      await m.owner.query(`UPDATE agents SET revoked_at = now() WHERE id = $1`, [t.agentA1.id]);
      try {
        expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
        expect(await statusOf(id)).toEqual({ status: 'queued', error: null });
      } finally {
        await m.owner.query(`UPDATE agents SET revoked_at = NULL WHERE id = $1`, [t.agentA1.id]);
      }
    });
  });
});
