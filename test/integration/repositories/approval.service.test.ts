import { randomBytes, randomUUID } from 'node:crypto';
import type { AppException } from '../../../src/common/errors/app.exception';
import { AuditService } from '../../../src/modules/audit/audit.service';
import { ApprovalRepository } from '../../../src/modules/pam/approvals/approval.repository';
import { ApprovalService } from '../../../src/modules/pam/approvals/approval.service';
import { ElevationRequestRepository } from '../../../src/modules/pam/requests/elevation-request.repository';
import { ElevationTransitionService } from '../../../src/modules/pam/requests/elevation-transition.service';
import { PamEventRepository } from '../../../src/modules/pam/requests/pam-event.repository';
import { PamEventService } from '../../../src/modules/pam/requests/pam-event.service';
import { callerOf, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, withdrawPushes, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Mobile approvals over the real repositories: one approver's decision moves the request, closes
 * the other approvers' approval requests and cancels their undelivered pushes; later deciders,
 * other sites and other tenants are refused without writing anything.
 */
describe('ApprovalService', () => {
  let m: Medium;
  let t: TenantRows;
  let service: ApprovalService;
  const adminA = () => callerOf({ orgIds: [t.orgA], userId: t.adminA });
  const tech = () => callerOf({ scope: 'partner', orgIds: [t.orgA, t.orgA2], partnerIds: [t.partnerP], partnerId: t.partnerP, orgId: null, partnerWide: true, userId: t.tech });
  const siteUserA1 = () => callerOf({ orgIds: [t.orgA], userId: t.siteUserA1, allowedSiteIds: [t.siteA1] });
  const adminB = () => callerOf({ orgIds: [t.orgB], userId: t.adminB });
  const refusal = (work: Promise<unknown>) =>
    work.then(
      () => {
        throw new Error('expected a refusal');
      },
      (e: AppException) => ({ status: e.getStatus(), body: e.getResponse() }),
    );
  /** A pending request of site `siteId` fanned out to every eligible approver; their approval ids by user. */
  const fannedOut = async (siteId: string, deviceId: string): Promise<{ request: string; approval: Record<string, string> }> => {
    const request = await insertRequest(m.owner, { orgId: t.orgA, siteId, deviceId });
    await m.system(() => m.get(ApprovalRepository).fanOut(t.orgA, request, 60));
    const rows = (await m.owner.query<{ id: string; approver_user_id: string }>(`SELECT id, approver_user_id FROM pam_approval_requests WHERE elevation_request_id = $1`, [request])).rows;
    return { request, approval: Object.fromEntries(rows.map((r) => [r.approver_user_id, r.id])) };
  };
  const approvalStatuses = async (request: string) =>
    Object.fromEntries(
      (await m.owner.query<{ approver_user_id: string; status: string }>(`SELECT approver_user_id, status FROM pam_approval_requests WHERE elevation_request_id = $1`, [request])).rows.map((r) => [
        r.approver_user_id,
        r.status,
      ]),
    );

  beforeAll(async () => {
    m = await startMedium([ApprovalRepository, ElevationRequestRepository, PamEventRepository, PamEventService, AuditService, ElevationTransitionService, ApprovalService]);
    service = m.get(ApprovalService);
    t = await seedTenants(m.owner);
    for (const user of [t.adminA, t.siteUserA1, t.tech]) {
      await m.owner.query(`INSERT INTO mobile_devices (id, user_id, platform, push_token, push_token_hmac) VALUES ($1, $2, 'android', $3, $4)`, [
        randomUUID(),
        user,
        randomBytes(8).toString('hex'),
        randomBytes(8).toString('hex'),
      ]);
    }
  });
  afterEach(() => withdrawPushes(m.owner, t));
  afterAll(() => m.close());

  it('approves from a phone: the request moves, the other approvers’ requests expire and their pushes are cancelled', async () => {
    const { request, approval } = await fannedOut(t.siteA1, t.deviceA1);
    expect(Object.keys(approval).sort()).toEqual([t.adminA, t.siteUserA1, t.tech].sort());
    const result = await m.asCaller(tech(), () => service.decide(tech(), approval[t.tech], { decision: 'approve', durationMinutes: 10 }));
    expect(result).toEqual({ success: true, id: approval[t.tech], elevationRequestId: request, status: 'approved' });
    expect((await m.owner.query(`SELECT status, approved_by FROM elevation_requests WHERE id = $1`, [request])).rows[0]).toEqual({ status: 'approved', approved_by: t.tech });
    expect(await approvalStatuses(request)).toEqual({ [t.tech]: 'approved', [t.adminA]: 'expired', [t.siteUserA1]: 'expired' });
    const pushes = (
      await m.owner.query(`SELECT a.approver_user_id, o.status FROM push_outbox o JOIN pam_approval_requests a ON a.id = o.approval_request_id WHERE a.elevation_request_id = $1`, [request])
    ).rows;
    expect(Object.fromEntries(pushes.map((p) => [p.approver_user_id, p.status]))).toEqual({ [t.tech]: 'pending', [t.adminA]: 'cancelled', [t.siteUserA1]: 'cancelled' });
    const event = (await m.owner.query(`SELECT details FROM pam_elevation_events WHERE elevation_request_id = $1 AND type = 'approved'`, [request])).rows[0];
    expect(event.details).toMatchObject({ via: 'mobile', approvalRequestId: approval[t.tech], durationMinutes: 10 });
  });

  it('answers a later approver 409 with the request’s status, and writes nothing of theirs', async () => {
    const { request, approval } = await fannedOut(t.siteA1, t.deviceA1);
    await m.asCaller(adminA(), () => service.decide(adminA(), approval[t.adminA], { decision: 'deny' }));
    expect(await refusal(m.asCaller(tech(), () => service.decide(tech(), approval[t.tech], { decision: 'approve' })))).toEqual({
      status: 409,
      body: expect.objectContaining({ code: 'already_decided', currentStatus: 'denied' }),
    });
    expect(await approvalStatuses(request)).toEqual({ [t.adminA]: 'denied', [t.tech]: 'expired', [t.siteUserA1]: 'expired' });
  });

  it('refuses an approver whose sites no longer include the request’s with 403', async () => {
    const { request, approval } = await fannedOut(t.siteA2, t.deviceA2);
    expect(approval[t.siteUserA1]).toBeUndefined();
    // An approval request left from before the member was restricted to site A1.
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour') RETURNING id`,
      [t.orgA, request, t.siteUserA1],
    );
    expect(await refusal(m.asCaller(siteUserA1(), () => service.decide(siteUserA1(), rows[0].id, { decision: 'approve' })))).toMatchObject({
      status: 403,
      body: { code: 'site_access_denied' },
    });
    expect((await m.owner.query(`SELECT status FROM elevation_requests WHERE id = $1`, [request])).rows[0].status).toBe('pending');
  });

  it('answers 404 to anyone but the approver, and to another tenant, and lists nothing of another tenant', async () => {
    const { request, approval } = await fannedOut(t.siteA1, t.deviceA1);
    expect(await refusal(m.asCaller(adminA(), () => service.decide(adminA(), approval[t.tech], { decision: 'approve' })))).toMatchObject({ status: 404 });
    expect(await refusal(m.asCaller(adminB(), () => service.decide(adminB(), approval[t.adminA], { decision: 'deny' })))).toMatchObject({ status: 404 });
    expect((await m.asCaller(adminB(), () => service.list(adminB()))).approvals).toEqual([]);
    expect((await m.asCaller(adminA(), () => service.list(adminA()))).approvals.map((a) => a.elevationRequestId)).toContain(request);
    expect(await approvalStatuses(request)).toEqual({ [t.adminA]: 'pending', [t.tech]: 'pending', [t.siteUserA1]: 'pending' });
  });

  it('answers 410 for an approval request past its expiry', async () => {
    const { approval } = await fannedOut(t.siteA1, t.deviceA1);
    await m.owner.query(`UPDATE pam_approval_requests SET expires_at = now() - interval '1 second' WHERE id = $1`, [approval[t.adminA]]);
    expect(await refusal(m.asCaller(adminA(), () => service.decide(adminA(), approval[t.adminA], { decision: 'approve' })))).toMatchObject({ status: 410, body: { code: 'expired' } });
  });
});
