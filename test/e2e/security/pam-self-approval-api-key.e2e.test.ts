import request from 'supertest';
import { NO_SCOPE } from '../../../src/infra/database/tenant-scope';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { ElevationRequestRepository } from '../../../src/modules/pam/requests/elevation-request.repository';
import { tenantFixture, TOTP_SECRET } from '../../factories/tenant.factory';
import { ownerQuery } from '../../support/test-app';
import { approvalsOf, bearer, PamWorld, registerPhone, respond, startPamWorld, storedRequest } from '../pam-lifecycle/pam-lifecycle.kit';

/**
 * Separation of duties with API keys: a key acts for the person who created it, so a technician
 * who files a just-in-time request (or an AI tool action) with his session cannot approve it with
 * his own key. The service check, the compare-and-swap predicate and a table constraint each
 * refuse it.
 */
describe('attack: a technician approves his own just-in-time request with his API key', () => {
  let w: PamWorld;
  let techKey: string;
  let adminKey: string;

  beforeAll(async () => {
    const fixture = tenantFixture();
    // Both enrolled in MFA, so that keys they create may be MFA-satisfied.
    for (const u of fixture.users!) if (u.key === 'tech' || u.key === 'adminA') u.totpSecret = TOTP_SECRET;
    w = await startPamWorld({}, fixture);
    await registerPhone(w, 'techA', `self-approval-${w.ids.techA}`).expect(201);
    await registerPhone(w, 'tech', `self-approval-${w.ids.tech}`).expect(201);
    const key = async (token: string, name: string) =>
      (
        await request(w.t.baseUrl)
          .post('/api/v1/api-keys')
          .set(bearer(token))
          .send({ name, orgId: w.ids.orgA, permissions: ['devices:read', 'devices:execute'], mfaSatisfied: true })
          .expect(201)
      ).body.key as string;
    techKey = await key(w.mfa.tech, 'Tech automation');
    adminKey = await key(w.mfa.adminA, 'Admin automation');
  });
  afterAll(() => w.t.close());

  async function fileJit(): Promise<string> {
    const res = await request(w.t.baseUrl)
      .post('/api/v1/pam/jit-requests')
      .set(bearer(w.mfa.tech))
      .send({ deviceId: w.ids.deviceA1, durationMinutes: 1440, reason: 'A day of admin' })
      .expect(201);
    expect(res.body.status).toBe('pending');
    return res.body.id;
  }

  it('refuses the approval with 403 self_approval and leaves the request pending', async () => {
    const id = await fileJit();
    const res = await respond(w, techKey, id, { decision: 'approve', durationMinutes: 1440 });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('self_approval');
    expect(await storedRequest(id)).toMatchObject({ status: 'pending', approved_by: null, expires_at: null });
  });

  it('gives the key nothing to actuate: the request was never approved', async () => {
    const id = await fileJit();
    await respond(w, techKey, id, { decision: 'approve' }).expect(403);
    const res = await request(w.t.baseUrl)
      .post(`/api/v1/devices/${w.ids.deviceA1}/actuate-elevation`)
      .set(bearer(techKey))
      .send({ elevationRequestId: id });
    expect([403, 409]).toContain(res.status);
    expect(await ownerQuery(`SELECT 1 FROM device_commands WHERE elevation_request_id = $1`, [id])).toEqual([]);
  });

  it('keeps the key off the mobile approval routes, which are for people on their phones', async () => {
    const id = await fileJit();
    const approvals = await approvalsOf(id);
    expect(approvals.map((a) => a.approver_user_id)).not.toContain(w.ids.tech);
    const other = approvals.find((a) => a.approver_user_id === w.ids.techA)!;
    expect((await request(w.t.baseUrl).get('/api/v1/approvals').set(bearer(techKey))).body.code).toBe('user_required');
    const decided = await request(w.t.baseUrl).post(`/api/v1/approvals/${other.id}/decide`).set(bearer(techKey)).send({ decision: 'approve' });
    expect(decided.status).toBe(403);
    expect(await storedRequest(id)).toMatchObject({ status: 'pending' });
  });

  it("lets another person's key approve, and records that person as the approver", async () => {
    const id = await fileJit();
    await respond(w, adminKey, id, { decision: 'approve', durationMinutes: 30 }).expect(200);
    expect(await storedRequest(id)).toMatchObject({ status: 'approved', approved_by: w.ids.adminA, approved_by_name: 'Admin A' });
  });

  it('the compare-and-swap alone refuses the subject, and an approver who is nobody, when the service check is skipped', async () => {
    const id = await fileJit();
    const approveAs = (userId: string | null) =>
      w.t.app.get(TenantTransactionService).run({ ...NO_SCOPE, scope: 'organization', orgIds: [w.ids.orgA], userId }, () =>
        w.t.app.get(ElevationRequestRepository).approve(id, { userId, apiKeyId: null }, 1440, null, 15),
      );
    expect(await approveAs(w.ids.tech)).toBeNull();
    expect(await approveAs(null)).toBeNull();
    expect(await storedRequest(id)).toMatchObject({ status: 'pending' });
    expect(await approveAs(w.ids.techA)).toMatchObject({ status: 'approved' });
  });

  it('refuses the technician the approval of an AI tool action he filed, with his session or his key, and lets another person approve it', async () => {
    const filed = await request(w.t.baseUrl)
      .post('/api/v1/pam/tool-actions')
      .set(bearer(w.mfa.tech))
      .send({ deviceId: w.ids.deviceA1, toolName: 'kill_process', input: { pid: 4242 } })
      .expect(201);
    expect(filed.body.status).toBe('pending');
    for (const credential of [w.mfa.tech, techKey]) {
      const res = await respond(w, credential, filed.body.id, { decision: 'approve' });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('self_approval');
    }
    expect((await approvalsOf(filed.body.id)).map((a) => a.approver_user_id)).not.toContain(w.ids.tech);
    await respond(w, adminKey, filed.body.id, { decision: 'approve', durationMinutes: 5 }).expect(200);
    expect(await storedRequest(filed.body.id)).toMatchObject({ status: 'approved', approved_by: w.ids.adminA });
  });

  it('the database itself refuses a self-approved just-in-time request, whatever code writes it', async () => {
    const id = await fileJit();
    await expect(
      ownerQuery(`UPDATE elevation_requests SET status = 'approved', approved_by = subject_user_id, decided_at = now(), expires_at = now() + interval '1 day' WHERE id = $1`, [id]),
    ).rejects.toThrow(/elevation_requests_no_self_approval/);
    expect(await storedRequest(id)).toMatchObject({ status: 'pending' });
  });
});
