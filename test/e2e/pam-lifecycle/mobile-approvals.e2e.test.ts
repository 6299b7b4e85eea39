import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { PushOutboxWorker } from '../../../src/modules/pam/approvals/push/push-outbox.worker';
import { ownerQuery } from '../../support/test-app';
import { approvalsOf, bearer, decide, eventsOf, fanOut, PamWorld, registerPhone, respond, seedRequest, startPamWorld, storedRequest } from './pam-lifecycle.kit';

/** A push gateway stand-in: records every body and answers with the next queued status (200 when none). */
class PushReceiver {
  readonly received: Record<string, unknown>[] = [];
  readonly statuses: number[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.received.push(JSON.parse(body));
        res.statusCode = this.statuses.shift() ?? 200;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/push`;
  }

  stop(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

async function outboxOf(elevationRequestId: string) {
  return ownerQuery<{ id: string; status: string; attempts: number; last_error: string | null; next_attempt_at: Date; delivered_at: Date | null; approver_user_id: string }>(
    `SELECT o.id, o.status, o.attempts, o.last_error, o.next_attempt_at, o.delivered_at, a.approver_user_id
       FROM push_outbox o JOIN pam_approval_requests a ON a.id = o.approval_request_id
      WHERE a.elevation_request_id = $1 ORDER BY a.approver_user_id`,
    [elevationRequestId],
  );
}

describe('mobile approvals: phones, approval requests and decisions', () => {
  const receiver = new PushReceiver();
  let w: PamWorld;
  const phones: Record<string, string> = {};

  beforeAll(async () => {
    await receiver.start();
    w = await startPamWorld({ PUSH_GATEWAY_URL: receiver.url });
    for (const user of ['adminA', 'readerA', 'siteA1User', 'adminB', 'tech', 'techA']) {
      phones[user] = (await registerPhone(w, user, `push-token-${user}-${w.ids[user]}`).expect(201)).body.mobileDevice.id;
    }
  });
  afterAll(async () => {
    await w.t.close();
    await receiver.stop();
  });

  /** Approval requests of the pending request, keyed by approver fixture key. */
  async function approvalIds(id: string): Promise<Record<string, string>> {
    const byUser = Object.fromEntries(Object.entries(w.ids).map(([k, v]) => [v, k]));
    return Object.fromEntries((await approvalsOf(id)).map((a) => [byUser[a.approver_user_id], a.id]));
  }

  describe('phones', () => {
    it('registers a phone with its push token sealed, and the same token again updates the same row', async () => {
      const first = await registerPhone(w, 'techA', 'second-phone-token', 'android').expect(201);
      expect(first.body).toEqual({ success: true, mobileDevice: { id: expect.any(String), platform: 'android', createdAt: expect.any(String), updatedAt: expect.any(String) } });
      const again = await registerPhone(w, 'techA', 'second-phone-token', 'ios').expect(201);
      expect(again.body.mobileDevice).toMatchObject({ id: first.body.mobileDevice.id, platform: 'ios' });
      const [stored] = await ownerQuery<{ push_token: string }>('SELECT push_token FROM mobile_devices WHERE id = $1', [first.body.mobileDevice.id]);
      expect(stored.push_token).not.toContain('second-phone-token');
      const listed = await request(w.t.baseUrl).get('/api/v1/mobile-devices').set(bearer(w.plain.techA)).expect(200);
      expect(listed.body.mobileDevices.map((m: { id: string }) => m.id)).toEqual([phones.techA, first.body.mobileDevice.id]);
      await request(w.t.baseUrl).delete(`/api/v1/mobile-devices/${first.body.mobileDevice.id}`).set(bearer(w.plain.tech)).expect(404);
      await request(w.t.baseUrl).delete(`/api/v1/mobile-devices/${first.body.mobileDevice.id}`).set(bearer(w.plain.techA)).expect(200);
      const after = await request(w.t.baseUrl).get('/api/v1/mobile-devices').set(bearer(w.plain.techA)).expect(200);
      expect(after.body.mobileDevices.map((m: { id: string }) => m.id)).toEqual([phones.techA]);
    });

    it('rejects an unknown platform, an empty token and a token over 4096 characters', async () => {
      await registerPhone(w, 'tech', 'x', 'windows' as 'ios').expect(400);
      for (const pushToken of ['', 'x'.repeat(4097)]) {
        const res = await registerPhone(w, 'tech', pushToken).expect(400);
        expect(res.body.details[0].field).toBe('pushToken');
      }
      await registerPhone(w, 'readerA', 'y'.repeat(4096)).expect(201);
    });

    it('refuses an eleventh phone for one user', async () => {
      const user = 'adminB';
      for (let i = 0; i < 9; i++) await registerPhone(w, user, `b-extra-${i}`).expect(201);
      const res = await registerPhone(w, user, 'b-extra-10').expect(409);
      expect(res.body).toMatchObject({ code: 'too_many_mobile_devices', limit: 10 });
    });
  });

  describe('fan-out', () => {
    it('creates one approval request per eligible technician with a phone: devices:execute on the organization and site', async () => {
      const id = await seedRequest(w, { device: 'deviceA1' });
      const result = await fanOut(w, id);
      expect(Object.keys(await approvalIds(id)).sort()).toEqual(['adminA', 'siteA1User', 'tech', 'techA']);
      expect(result.approvals).toBe(4);
      expect(result.pushes).toBeGreaterThanOrEqual(4);
      const [approval] = await ownerQuery<{ expires_at: Date; requested_at: Date }>(
        `SELECT a.expires_at, e.requested_at FROM pam_approval_requests a JOIN elevation_requests e ON e.id = a.elevation_request_id WHERE e.id = $1 LIMIT 1`,
        [id],
      );
      expect((approval.expires_at.getTime() - approval.requested_at.getTime()) / 60_000).toBe(15);
    });

    it('leaves out technicians without access to the site, without a phone, disabled, and the subject of a JIT request', async () => {
      const a2 = await seedRequest(w, { device: 'deviceA2' });
      await fanOut(w, a2);
      expect(Object.keys(await approvalIds(a2)).sort()).toEqual(['adminA', 'tech', 'techA']);

      const jit = await seedRequest(w, { flowType: 'tech_jit_admin', subjectUserId: w.ids.tech });
      await fanOut(w, jit);
      expect(Object.keys(await approvalIds(jit)).sort()).toEqual(['adminA', 'siteA1User', 'techA']);

      await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [w.ids.techA]);
      await ownerQuery(`DELETE FROM mobile_devices WHERE user_id = $1`, [w.ids.siteA1User]);
      try {
        const later = await seedRequest(w, { device: 'deviceA1' });
        await fanOut(w, later);
        expect(Object.keys(await approvalIds(later)).sort()).toEqual(['adminA', 'tech']);
      } finally {
        await ownerQuery(`UPDATE users SET status = 'active' WHERE id = $1`, [w.ids.techA]);
        phones.siteA1User = (await registerPhone(w, 'siteA1User', `push-token-siteA1User-again`).expect(201)).body.mobileDevice.id;
      }
    });

    it('writes nothing for a request that is no longer pending', async () => {
      const id = await seedRequest(w, { status: 'denied' });
      expect(await fanOut(w, id)).toEqual({ approvals: 0, pushes: 0 });
    });
  });

  describe('decide', () => {
    it('lists the caller\'s open approval requests', async () => {
      const id = await seedRequest(w, { device: 'deviceA1', path: 'C:\\Tools\\listed.exe' });
      await fanOut(w, id);
      const res = await request(w.t.baseUrl).get('/api/v1/approvals').set(bearer(w.plain.techA)).expect(200);
      const mine = res.body.approvals.find((a: { elevationRequestId: string }) => a.elevationRequestId === id);
      expect(mine).toMatchObject({ orgId: w.ids.orgA, deviceId: w.ids.deviceA1, flowType: 'uac_intercept', targetExecutablePath: 'C:\\Tools\\listed.exe', expiresAt: expect.any(String) });
      const other = await request(w.t.baseUrl).get('/api/v1/approvals').set(bearer(w.plain.adminB)).expect(200);
      expect(other.body.approvals.map((a: { elevationRequestId: string }) => a.elevationRequestId)).not.toContain(id);
    });

    it('approves through the phone: the first decision wins and the sibling approval requests expire', async () => {
      const id = await seedRequest(w);
      await fanOut(w, id);
      const mine = await approvalIds(id);
      const res = await decide(w, w.mfa.techA, mine.techA, { decision: 'approve', durationMinutes: 60 }).expect(200);
      expect(res.body).toEqual({ success: true, id: mine.techA, elevationRequestId: id, status: 'approved' });
      expect(await storedRequest(id)).toMatchObject({ status: 'approved', approved_by: w.ids.techA, approved_by_name: 'Tech A', duration_minutes: 60 });
      const statuses = Object.fromEntries((await approvalsOf(id)).map((a) => [a.id, a.status]));
      expect(statuses[mine.techA]).toBe('approved');
      expect(Object.values(statuses).filter((s) => s === 'expired')).toHaveLength(3);
      expect(await eventsOf(id)).toEqual([expect.objectContaining({ type: 'approved', details: expect.objectContaining({ via: 'mobile', approvalRequestId: mine.techA }) })]);
      const late = await decide(w, w.mfa.tech, mine.tech, { decision: 'deny' }).expect(409);
      expect(late.body).toMatchObject({ code: 'already_decided', currentStatus: 'approved' });
      const twice = await decide(w, w.mfa.techA, mine.techA, { decision: 'deny' }).expect(409);
      expect(twice.body).toMatchObject({ code: 'already_decided', currentStatus: 'approved' });
    });

    it('denies without a reason', async () => {
      const id = await seedRequest(w);
      await fanOut(w, id);
      const mine = await approvalIds(id);
      await decide(w, w.mfa.tech, mine.tech, { decision: 'deny' }).expect(200);
      expect(await storedRequest(id)).toMatchObject({ status: 'denied', denied_by: w.ids.tech, decision_reason: null });
    });

    it('answers 409 for an approval request whose elevation was decided on the console', async () => {
      const id = await seedRequest(w);
      await fanOut(w, id);
      const mine = await approvalIds(id);
      await respond(w, w.mfa.adminA, id, { decision: 'deny' }).expect(200);
      const res = await decide(w, w.mfa.tech, mine.tech, { decision: 'approve' }).expect(409);
      expect(res.body).toMatchObject({ code: 'already_decided', currentStatus: 'denied' });
    });

    it('answers 410 expired past the approval request\'s expiry, even before the sweeper ran', async () => {
      const id = await seedRequest(w);
      await fanOut(w, id);
      const mine = await approvalIds(id);
      await ownerQuery(`UPDATE pam_approval_requests SET expires_at = now() - interval '1 second' WHERE elevation_request_id = $1`, [id]);
      await ownerQuery(`UPDATE elevation_requests SET requested_at = now() - interval '16 minutes' WHERE id = $1`, [id]);
      const res = await decide(w, w.mfa.tech, mine.tech, { decision: 'approve' }).expect(410);
      expect(res.body).toMatchObject({ success: false, statusCode: 410, code: 'expired' });
      expect((await storedRequest(id)).status).toBe('pending');
    });

    it('needs MFA, and re-checks the approver\'s permission and site access at decision time', async () => {
      const id = await seedRequest(w, { device: 'deviceA1' });
      await fanOut(w, id);
      const mine = await approvalIds(id);
      expect((await decide(w, w.plain.tech, mine.tech, { decision: 'approve' }).expect(403)).body.code).toBe('mfa_required');

      await ownerQuery(`UPDATE roles SET permissions = '{devices:read}' WHERE id = (SELECT role_id FROM partner_memberships WHERE user_id = $1)`, [w.ids.tech]);
      try {
        const res = await decide(w, w.mfa.tech, mine.tech, { decision: 'approve' }).expect(403);
        expect(res.body).toMatchObject({ code: 'forbidden', permission: 'devices:execute' });
      } finally {
        await ownerQuery(`UPDATE roles SET permissions = '{*}' WHERE id = (SELECT role_id FROM partner_memberships WHERE user_id = $1)`, [w.ids.tech]);
      }

      await ownerQuery(`UPDATE organization_memberships SET site_restricted = true WHERE user_id = $1`, [w.ids.adminA]);
      await ownerQuery(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) VALUES ($1, $2, $3)`, [w.ids.orgA, w.ids.adminA, w.ids.siteA2]);
      try {
        const res = await decide(w, w.mfa.adminA, mine.adminA, { decision: 'approve' }).expect(403);
        expect(res.body.code).toBe('site_access_denied');
      } finally {
        await ownerQuery(`DELETE FROM organization_membership_sites WHERE user_id = $1`, [w.ids.adminA]);
        await ownerQuery(`UPDATE organization_memberships SET site_restricted = false WHERE user_id = $1`, [w.ids.adminA]);
      }
      expect((await storedRequest(id)).status).toBe('pending');
      await decide(w, w.mfa.tech, mine.tech, { decision: 'approve' }).expect(200);
    });

    it('answers 404 for another approver\'s approval request and 400 for a bad body or id', async () => {
      const id = await seedRequest(w);
      await fanOut(w, id);
      const mine = await approvalIds(id);
      await decide(w, w.mfa.techA, mine.tech, { decision: 'approve' }).expect(404);
      await decide(w, w.mfa.adminB, mine.tech, { decision: 'approve' }).expect(404);
      for (const body of [{}, { decision: 'ok' }, { decision: 'approve', durationMinutes: 1441 }, { decision: 'deny', reason: 'x'.repeat(2001) }, { decision: 'deny', extra: true }]) {
        expect((await decide(w, w.mfa.tech, mine.tech, body).expect(400)).body.code).toBe('validation_failed');
      }
      expect((await decide(w, w.mfa.tech, 'nope', { decision: 'approve' }).expect(400)).body.code).toBe('invalid_id');
    });

    it('lets exactly one of two simultaneous phone decisions through', async () => {
      for (let round = 0; round < 5; round++) {
        const id = await seedRequest(w);
        await fanOut(w, id);
        const mine = await approvalIds(id);
        const [a, b] = await Promise.all([
          decide(w, w.mfa.tech, mine.tech, { decision: 'approve' }),
          decide(w, w.mfa.techA, mine.techA, { decision: 'deny' }),
        ]);
        expect([a.status, b.status].sort()).toEqual([200, 409]);
        const loser = a.status === 409 ? a : b;
        expect(loser.body.code).toBe('already_decided');
        expect(await eventsOf(id)).toHaveLength(1);
        const statuses = (await approvalsOf(id)).map((x) => x.status).sort();
        expect(statuses.filter((s) => s === 'approved' || s === 'denied')).toHaveLength(1);
        expect(statuses.filter((s) => s === 'expired')).toHaveLength(statuses.length - 1);
      }
    });
  });

  describe('push delivery', () => {
    const worker = () => w.t.app.get(PushOutboxWorker);
    /**
     * Sends every push already due on the run's database, other files' included, until none is left: a worker run
     * claims the oldest due pushes first (50 at a time), so pushes other files queued and never delivered would
     * otherwise be claimed before this test's own, and take the gateway answers the test scripts.
     */
    const drain = async () => {
      for (let run = 0; run < 50 && (await worker().runOnce()).length > 0; run++);
    };

    it('delivers one push per phone after commit, with ids but no secrets in the data', async () => {
      await drain();
      receiver.received.length = 0;
      const id = await seedRequest(w, { device: 'deviceA2', path: 'C:\\Apps\\deliver-me.exe' });
      await fanOut(w, id);
      await worker().runOnce();
      const mine = receiver.received.filter((m) => (m.data as Record<string, string>).elevationRequestId === id);
      expect(mine).toHaveLength(3);
      expect(mine.map((m) => m.token).sort()).toEqual([`push-token-adminA-${w.ids.adminA}`, `push-token-tech-${w.ids.tech}`, `push-token-techA-${w.ids.techA}`].sort());
      expect(mine[0]).toMatchObject({ platform: 'ios', title: 'Elevation approval requested', body: `deliver-me.exe on ${w.f.devices![1].hostname}` });
      expect(Object.keys(mine[0].data as object).sort()).toEqual(['approvalRequestId', 'elevationRequestId', 'expiresAt', 'orgId']);
      expect((await outboxOf(id)).map((o) => [o.status, o.attempts])).toEqual([
        ['delivered', 1],
        ['delivered', 1],
        ['delivered', 1],
      ]);
    });

    it('retries a push the gateway could not take, with backoff, and gives up on a refused one', async () => {
      await drain();
      const id = await seedRequest(w, { device: 'deviceA2' });
      await fanOut(w, id);
      receiver.statuses.push(503, 400, 503);
      await worker().runOnce();
      let rows = await outboxOf(id);
      const retrying = rows.filter((r) => r.status === 'pending');
      expect(retrying).toHaveLength(2);
      for (const r of retrying) {
        expect(r).toMatchObject({ attempts: 1, last_error: 'Push gateway answered HTTP 503' });
        expect(r.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(3000);
      }
      expect(rows.find((r) => r.status === 'failed')).toMatchObject({ attempts: 1, last_error: 'Push gateway answered HTTP 400' });
      await worker().runOnce();
      expect((await outboxOf(id)).map((r) => r.attempts)).toEqual(rows.map((r) => r.attempts));
      await ownerQuery(`UPDATE push_outbox SET next_attempt_at = now() WHERE status = 'pending' AND approval_request_id IN (SELECT id FROM pam_approval_requests WHERE elevation_request_id = $1)`, [id]);
      await worker().runOnce();
      rows = await outboxOf(id);
      expect(rows.map((r) => r.status).sort()).toEqual(['delivered', 'delivered', 'failed']);
      expect(rows.filter((r) => r.status === 'delivered').map((r) => r.attempts)).toEqual([2, 2]);
    });

    it('cancels pushes of approval requests that can no longer be decided instead of sending them', async () => {
      await drain();
      receiver.received.length = 0;
      const id = await seedRequest(w, { device: 'deviceA2' });
      await fanOut(w, id);
      await respond(w, w.mfa.adminA, id, { decision: 'approve' }).expect(200);
      await worker().runOnce();
      expect((await outboxOf(id)).map((o) => o.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
      expect(receiver.received.filter((m) => (m.data as Record<string, string>).elevationRequestId === id)).toEqual([]);
    });

    it('records a retry when the gateway is unreachable, without failing the fan-out that queued it', async () => {
      await drain();
      const down = await startPamWorld({ PUSH_GATEWAY_URL: 'http://127.0.0.1:9/unreachable' });
      try {
        await registerPhone(down, 'tech', 'unreachable-token').expect(201);
        const id = await seedRequest(down);
        expect((await fanOut(down, id)).approvals).toBe(1);
        await down.t.app.get(PushOutboxWorker).runOnce();
        const [row] = await outboxOf(id);
        expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: expect.stringMatching(/^Push gateway unreachable/) });
      } finally {
        await down.t.close();
      }
    });
  });
});
