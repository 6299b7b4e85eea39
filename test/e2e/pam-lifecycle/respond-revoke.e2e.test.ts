import { ownerQuery } from '../../support/test-app';
import { ElevationExpiryJob } from '../../../src/modules/pam/requests/elevation-expiry.job';
import { ageRequest, auditOf, commandsOf, eventsOf, PamWorld, respond, revoke, seedRequest, startPamWorld, storedRequest } from './pam-lifecycle.kit';

describe('respond and revoke (spec P3, P4.1, P7)', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
  });
  afterAll(() => w.t.close());

  describe('respond', () => {
    it('approves a pending request for the default 15 minutes, with event, audit row and approver name', async () => {
      const id = await seedRequest(w);
      const res = await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(200);
      expect(res.body).toEqual({ success: true, id, status: 'approved' });
      const row = await storedRequest(id);
      expect(row).toMatchObject({ status: 'approved', decision_source: 'human', approved_by: w.ids.adminA, approved_by_name: 'Admin A', duration_minutes: 15 });
      const minutes = ((row.expires_at as Date).getTime() - (row.decided_at as Date).getTime()) / 60_000;
      expect(minutes).toBeCloseTo(15, 5);
      expect(await eventsOf(id)).toEqual([
        { type: 'approved', from_status: 'pending', to_status: 'approved', actor_type: 'user', details: expect.objectContaining({ via: 'console', durationMinutes: 15 }) },
      ]);
      expect(await auditOf(id)).toEqual([expect.objectContaining({ action: 'pam.elevation.approve', actor_type: 'user' })]);
    });

    it('takes the approval window from durationMinutes, 1 and 1440 accepted, 0 and 1441 refused', async () => {
      for (const minutes of [1, 1440]) {
        const id = await seedRequest(w);
        await respond(w, w.mfa.adminA, id, { decision: 'approve', durationMinutes: minutes }).expect(200);
        const row = await storedRequest(id);
        expect(((row.expires_at as Date).getTime() - (row.decided_at as Date).getTime()) / 60_000).toBeCloseTo(minutes, 5);
      }
      const id = await seedRequest(w);
      for (const bad of [0, 1441, 1.5, '15']) {
        const res = await respond(w, w.mfa.adminA, id, { decision: 'approve', durationMinutes: bad }).expect(400);
        expect(res.body).toMatchObject({ code: 'validation_failed', details: expect.arrayContaining([expect.objectContaining({ field: 'durationMinutes' })]) });
      }
      expect((await storedRequest(id)).status).toBe('pending');
    });

    it('denies without a reason, and with a reason of exactly 2000 characters', async () => {
      const a = await seedRequest(w);
      expect((await respond(w, w.mfa.adminA, a, { decision: 'deny' }).expect(200)).body).toEqual({ success: true, id: a, status: 'denied' });
      expect(await storedRequest(a)).toMatchObject({ status: 'denied', denied_by: w.ids.adminA, denied_by_name: 'Admin A', decision_reason: null, expires_at: null });
      const b = await seedRequest(w);
      await respond(w, w.mfa.adminA, b, { decision: 'deny', reason: 'x'.repeat(2000) }).expect(200);
      expect((await storedRequest(b)).decision_reason).toHaveLength(2000);
      const c = await seedRequest(w);
      const long = await respond(w, w.mfa.adminA, c, { decision: 'deny', reason: 'x'.repeat(2001) }).expect(400);
      expect(long.body.details[0].field).toBe('reason');
    });

    it('rejects a missing or unknown decision, unknown properties and a malformed id with 400', async () => {
      const id = await seedRequest(w);
      for (const body of [{}, { decision: 'maybe' }, { decision: 'approve', extra: 1 }, { decision: 'deny', reason: 42 }]) {
        const res = await respond(w, w.mfa.adminA, id, body).expect(400);
        expect(res.body.code).toBe('validation_failed');
      }
      const bad = await respond(w, w.mfa.adminA, 'not-a-uuid', { decision: 'approve' }).expect(400);
      expect(bad.body.code).toBe('invalid_id');
    });

    it('answers 409 not_pending with the current status once the request is decided', async () => {
      const id = await seedRequest(w);
      await respond(w, w.mfa.adminA, id, { decision: 'deny' }).expect(200);
      const again = await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(409);
      expect(again.body).toMatchObject({ success: false, statusCode: 409, code: 'not_pending', currentStatus: 'denied' });
      expect(await eventsOf(id)).toHaveLength(1);
    });

    it('never approves a pending request past its TTL, even before the sweeper ran', async () => {
      const id = await seedRequest(w, { ageMinutes: 16 });
      const res = await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(409);
      expect(res.body).toMatchObject({ code: 'not_pending', currentStatus: 'expired' });
      await respond(w, w.mfa.adminA, id, { decision: 'deny' }).expect(409);
      expect(await storedRequest(id)).toMatchObject({ status: 'pending', approved_by: null, denied_by: null });
    });

    it('refuses to decide an AI tool action whose execution has timed out (pending past its TTL) with 409', async () => {
      const id = await seedRequest(w, { flowType: 'ai_tool_action', toolName: 'kill_process', riskTier: 2, ageMinutes: 16 });
      const res = await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(409);
      expect(res.body).toMatchObject({ code: 'not_pending', currentStatus: 'expired' });
    });

    it('needs devices:execute and a session that satisfied MFA', async () => {
      const id = await seedRequest(w);
      const noMfa = await respond(w, w.plain.adminA, id, { decision: 'approve' }).expect(403);
      expect(noMfa.body.code).toBe('mfa_required');
      const reader = await respond(w, w.mfa.readerA, id, { decision: 'approve' }).expect(403);
      expect(reader.body).toMatchObject({ code: 'forbidden', permission: 'devices:execute' });
      expect((await storedRequest(id)).status).toBe('pending');
    });

    it('refuses a site-restricted member on another site with 403, and another tenant with 404', async () => {
      const a2 = await seedRequest(w, { device: 'deviceA2' });
      const site = await respond(w, w.mfa.siteA1User, a2, { decision: 'approve' }).expect(403);
      expect(site.body.code).toBe('site_access_denied');
      const other = await respond(w, w.mfa.adminB, a2, { decision: 'approve' }).expect(404);
      expect(other.body.code).toBe('not_found');
      expect((await storedRequest(a2)).status).toBe('pending');
      const a1 = await seedRequest(w, { device: 'deviceA1' });
      await respond(w, w.mfa.siteA1User, a1, { decision: 'approve' }).expect(200);
    });

    it('refuses a technician approving their own just-in-time request (403 self_approval) but lets another approve it', async () => {
      const id = await seedRequest(w, { flowType: 'tech_jit_admin', subjectUserId: w.ids.tech, subjectUsername: w.f.emails.tech });
      const self = await respond(w, w.mfa.tech, id, { decision: 'approve' }).expect(403);
      expect(self.body.code).toBe('self_approval');
      expect((await storedRequest(id)).status).toBe('pending');
      await respond(w, w.mfa.techA, id, { decision: 'approve' }).expect(200);
    });

    it('expires the request\'s pending mobile approval requests when it is decided on the console', async () => {
      const id = await seedRequest(w);
      await ownerQuery(
        `INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, expires_at)
         VALUES ($1, $2, $3, now() + interval '15 minutes'), ($1, $2, $4, now() + interval '15 minutes')`,
        [w.ids.orgA, id, w.ids.tech, w.ids.techA],
      );
      await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(200);
      const approvals = await ownerQuery<{ status: string }>('SELECT status FROM pam_approval_requests WHERE elevation_request_id = $1', [id]);
      expect(approvals.map((a) => a.status)).toEqual(['expired', 'expired']);
    });
  });

  describe('revoke', () => {
    it('revokes an approved, an auto-approved and an actuating elevation', async () => {
      for (const status of ['approved', 'auto_approved', 'actuating']) {
        const id = await seedRequest(w, { status });
        const res = await revoke(w, w.mfa.adminA, id, { reason: 'Done with it' }).expect(200);
        expect(res.body).toEqual({ success: true, id, status: 'revoked' });
        expect(await storedRequest(id)).toMatchObject({ status: 'revoked', revoked_by: w.ids.adminA, revoked_by_name: 'Admin A', revoke_reason: 'Done with it' });
        expect(await eventsOf(id)).toEqual([expect.objectContaining({ type: 'revoked', from_status: status, to_status: 'revoked', details: expect.objectContaining({ reason: 'Done with it' }) })]);
        expect((await auditOf(id)).map((a) => a.action)).toEqual(['pam.elevation.revoke']);
      }
    });

    it('queues revoke_elevation for the agent when the elevation had been actuated, and withdraws an undelivered actuation', async () => {
      const id = await seedRequest(w, { status: 'actuating' });
      await ownerQuery(
        `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id) VALUES ($1, $2, 'actuate_elevation', jsonb_build_object('elevationRequestId', $3::uuid, 'timeoutMs', 8000), $3)`,
        [w.ids.orgA, w.ids.deviceA1, id],
      );
      await revoke(w, w.mfa.adminA, id, { reason: 'Stop' }).expect(200);
      const commands = await commandsOf(id);
      expect(commands.map((c) => [c.type, c.status])).toEqual([
        ['actuate_elevation', 'failed'],
        ['revoke_elevation', 'queued'],
      ]);
      expect(commands[1].payload).toEqual({ elevationRequestId: id });
    });

    it('queues no device command when the elevation was never actuated', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      await revoke(w, w.mfa.adminA, id, { reason: 'Stop' }).expect(200);
      expect(await commandsOf(id)).toEqual([]);
    });

    it('requires a reason of 1 to 2000 characters', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(2001) }, { reason: 7 }]) {
        const res = await revoke(w, w.mfa.adminA, id, body).expect(400);
        expect(res.body).toMatchObject({ code: 'validation_failed', details: expect.arrayContaining([expect.objectContaining({ field: 'reason' })]) });
      }
      await revoke(w, w.mfa.adminA, id, { reason: 'x'.repeat(2000) }).expect(200);
    });

    it('answers 409 not_active for a pending, denied or already revoked request', async () => {
      for (const status of ['pending', 'denied', 'revoked']) {
        const id = await seedRequest(w, { status });
        const res = await revoke(w, w.mfa.adminA, id, { reason: 'r' }).expect(409);
        expect(res.body).toMatchObject({ code: 'not_active', currentStatus: status });
      }
    });

    it('never revokes an elevation whose window has ended, even before the sweeper ran', async () => {
      const id = await seedRequest(w, { status: 'auto_approved', expiresInMinutes: -1 });
      const res = await revoke(w, w.mfa.adminA, id, { reason: 'late' }).expect(409);
      expect(res.body).toMatchObject({ code: 'not_active', currentStatus: 'expired' });
      expect((await storedRequest(id)).status).toBe('auto_approved');
    });

    it('needs MFA and devices:execute, and refuses other sites and tenants', async () => {
      const id = await seedRequest(w, { status: 'approved', device: 'deviceA2' });
      expect((await revoke(w, w.plain.adminA, id, { reason: 'r' }).expect(403)).body.code).toBe('mfa_required');
      expect((await revoke(w, w.mfa.readerA, id, { reason: 'r' }).expect(403)).body.code).toBe('forbidden');
      expect((await revoke(w, w.mfa.siteA1User, id, { reason: 'r' }).expect(403)).body.code).toBe('site_access_denied');
      expect((await revoke(w, w.mfa.adminB, id, { reason: 'r' }).expect(404)).body.code).toBe('not_found');
      expect((await storedRequest(id)).status).toBe('approved');
    });
  });

  describe('expiry sweeper', () => {
    it('expires pending requests past the TTL and elevations past their window, with events, audit rows and sibling approvals', async () => {
      // Seeded young and aged only once its approval exists: another sweep (below) must never end it without that approval.
      const pending = await seedRequest(w, { ageMinutes: 1 });
      const freshPending = await seedRequest(w, { ageMinutes: 14 });
      const approved = await seedRequest(w, { status: 'approved', expiresInMinutes: -1 });
      const actuating = await seedRequest(w, { status: 'actuating', expiresInMinutes: -1 });
      const running = await seedRequest(w, { status: 'auto_approved', expiresInMinutes: 5 });
      await ownerQuery(
        `INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, expires_at) VALUES ($1, $2, $3, now() - interval '1 minute')`,
        [w.ids.orgA, pending, w.ids.tech],
      );
      await ownerQuery(`UPDATE elevation_requests SET requested_at = now() - interval '16 minutes' WHERE id = $1`, [pending]);
      // The sweep is global (system context), and this file runs twice at once on the run's database (directly and
      // through PgBouncer): the other copy's sweep may end these requests first, so the number this call returns is
      // not checked here (the medium tier checks it, with no other sweeper). What is stored is the same either way.
      await w.t.app.get(ElevationExpiryJob).runOnce();
      expect((await storedRequest(pending)).status).toBe('expired');
      expect((await storedRequest(approved)).status).toBe('expired');
      expect((await storedRequest(actuating)).status).toBe('expired');
      expect((await storedRequest(freshPending)).status).toBe('pending');
      expect((await storedRequest(running)).status).toBe('auto_approved');
      expect(await eventsOf(pending)).toEqual([{ type: 'expired', from_status: 'pending', to_status: 'expired', actor_type: 'system', details: { reason: 'pending_ttl' } }]);
      expect(await eventsOf(actuating)).toEqual([expect.objectContaining({ type: 'expired', from_status: 'actuating', details: { reason: 'window_ended' } })]);
      expect(await auditOf(approved)).toEqual([{ action: 'pam.elevation.expire', actor_type: 'system', details: { fromStatus: 'approved' } }]);
      const [approval] = await ownerQuery<{ status: string }>('SELECT status FROM pam_approval_requests WHERE elevation_request_id = $1', [pending]);
      expect(approval.status).toBe('expired');
      expect((await commandsOf(actuating)).map((c) => [c.type, c.status])).toEqual([['revoke_elevation', 'queued']]);
      expect(await commandsOf(approved)).toEqual([]);
    });

    it('does nothing to a request a second sweep finds already expired', async () => {
      const id = await seedRequest(w, { ageMinutes: 20 });
      await w.t.app.get(ElevationExpiryJob).runOnce();
      await w.t.app.get(ElevationExpiryJob).runOnce();
      expect(await eventsOf(id)).toHaveLength(1);
    });

    it('takes the TTL from PAM_PENDING_TTL_MINUTES', async () => {
      const other = await startPamWorld({ PAM_PENDING_TTL_MINUTES: '2' });
      try {
        const young = await seedRequest(other, { ageMinutes: 1 });
        const old = await seedRequest(other, { ageMinutes: 3 });
        const res = await respond(other, other.mfa.adminA, old, { decision: 'approve' }).expect(409);
        expect(res.body.currentStatus).toBe('expired');
        await respond(other, other.mfa.adminA, young, { decision: 'approve' }).expect(200);
      } finally {
        await other.t.close();
      }
    });

    it('makes the request unapprovable once aged past its TTL by moving its timestamps', async () => {
      const id = await seedRequest(w);
      await ageRequest(id, 15);
      expect((await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(409)).body.currentStatus).toBe('expired');
    });
  });
});
