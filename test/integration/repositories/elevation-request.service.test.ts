import type { AppException } from '../../../src/common/errors/app.exception';
import { AuditService } from '../../../src/modules/audit/audit.service';
import { ElevationRequestRepository } from '../../../src/modules/pam/requests/elevation-request.repository';
import { ElevationRequestService } from '../../../src/modules/pam/requests/elevation-request.service';
import { ElevationTransitionService } from '../../../src/modules/pam/requests/elevation-transition.service';
import { PamEventRepository } from '../../../src/modules/pam/requests/pam-event.repository';
import { PamEventService } from '../../../src/modules/pam/requests/pam-event.service';
import { callerOf, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The request queue's service over the real repositories: a decision writes the transition, its
 * event and its audit row in the caller's one transaction; site scope and tenancy decide between
 * 403 and 404. No HTTP: errors are the AppExceptions the global filter would render.
 */
describe('ElevationRequestService', () => {
  let m: Medium;
  let t: TenantRows;
  let service: ElevationRequestService;
  const adminA = () => callerOf({ orgIds: [t.orgA], userId: t.adminA });
  const siteUserA1 = () => callerOf({ orgIds: [t.orgA], userId: t.siteUserA1, allowedSiteIds: [t.siteA1] });
  const adminB = () => callerOf({ orgIds: [t.orgB], userId: t.adminB });
  /** The status and body an AppException would be rendered with (the global filter adds the rest). */
  const refusal = (work: Promise<unknown>) =>
    work.then(
      () => {
        throw new Error('expected a refusal');
      },
      (e: AppException) => ({ status: e.getStatus(), body: e.getResponse() }),
    );
  const pending = (siteId = t.siteA1, deviceId = t.deviceA1) => insertRequest(m.owner, { orgId: t.orgA, siteId, deviceId });

  beforeAll(async () => {
    m = await startMedium([ElevationRequestRepository, PamEventRepository, PamEventService, AuditService, ElevationTransitionService, ElevationRequestService]);
    service = m.get(ElevationRequestService);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('approves a pending request and records the approved event and the audit row with it', async () => {
    const id = await pending();
    expect(await m.asCaller(adminA(), () => service.respond(adminA(), id, { decision: 'approve', durationMinutes: 20, reason: 'ticket 42' }), { id: 'req-approve' })).toEqual({
      success: true,
      id,
      status: 'approved',
    });
    const events = (await m.owner.query(`SELECT type, from_status, to_status, actor_type, actor_id FROM pam_elevation_events WHERE elevation_request_id = $1`, [id])).rows;
    expect(events).toEqual([{ type: 'approved', from_status: 'pending', to_status: 'approved', actor_type: 'user', actor_id: t.adminA }]);
    const audits = (await m.owner.query(`SELECT actor_user_id, request_id FROM audit_logs WHERE resource_id = $1`, [id])).rows;
    expect(audits).toEqual([{ actor_user_id: t.adminA, request_id: 'req-approve' }]);
    const detail = await m.asCaller(adminA(), () => service.get(adminA(), id));
    expect(detail.request).toMatchObject({ status: 'approved', approvedByName: 'Admin A', decisionSource: 'human', deviceHostname: `WS-A1-${t.label}` });
    expect(detail.events.map((e) => e.type)).toEqual(['approved']);
  });

  it('answers 409 with the current status when the request was decided already, and writes nothing more', async () => {
    const id = await pending();
    await m.asCaller(adminA(), () => service.respond(adminA(), id, { decision: 'deny' }));
    expect(await refusal(m.asCaller(adminA(), () => service.respond(adminA(), id, { decision: 'approve' })))).toEqual({
      status: 409,
      body: expect.objectContaining({ code: 'not_pending', currentStatus: 'denied' }),
    });
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM pam_elevation_events WHERE elevation_request_id = $1`, [id])).rows[0].n).toBe(1);
  });

  it('refuses a site-restricted member a request of another site of their organization with 403, and lists only their sites', async () => {
    const otherSite = await pending(t.siteA2, t.deviceA2);
    expect(await refusal(m.asCaller(siteUserA1(), () => service.respond(siteUserA1(), otherSite, { decision: 'deny' })))).toMatchObject({ status: 403, body: { code: 'site_access_denied' } });
    expect(await refusal(m.asCaller(siteUserA1(), () => service.get(siteUserA1(), otherSite)))).toMatchObject({ status: 404 });
    const listed = await m.asCaller(siteUserA1(), () => service.list(siteUserA1(), { limit: 100 }));
    expect(listed.requests.length).toBeGreaterThan(0);
    expect(listed.requests.every((r) => r.siteId === t.siteA1)).toBe(true);
    expect(listed.pagination.total).toBe(listed.requests.length);
  });

  it('answers 404 for another tenant’s request, to read or to decide, and leaves it pending', async () => {
    const id = await pending();
    expect(await refusal(m.asCaller(adminB(), () => service.get(adminB(), id)))).toMatchObject({ status: 404 });
    expect(await refusal(m.asCaller(adminB(), () => service.respond(adminB(), id, { decision: 'approve' })))).toMatchObject({ status: 404 });
    const theirs = await m.asCaller(adminB(), () => service.list(adminB(), { limit: 100 }));
    expect(theirs.requests.map((r) => r.id)).not.toContain(id);
    expect((await m.owner.query(`SELECT status FROM elevation_requests WHERE id = $1`, [id])).rows[0].status).toBe('pending');
  });

  it('refuses a list whose range ends before it starts, as a validation error', async () => {
    expect(await refusal(m.asCaller(adminA(), () => service.list(adminA(), { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' })))).toMatchObject({
      status: 400,
      body: { code: 'validation_failed' },
    });
  });
});
