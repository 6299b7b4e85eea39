import request from 'supertest';
import { ownerQuery } from '../../support/test-app';
import { auditOf, bearer, decide, eventsOf, PamWorld, registerPhone, revoke, startPamWorld, storedRequest } from './pam-lifecycle.kit';

/** One observed prompt from agent ingest to revocation on the device, through every route of the lifecycle. */
describe('an elevation prompt from ingest to revocation', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
    await registerPhone(w, 'techA', 'lifecycle-phone').expect(201);
  });
  afterAll(() => w.t.close());

  it('is recorded pending, approved on a phone, actuated by the agent and revoked, with every event and audit row', async () => {
    const agent = (path: string) => `/api/v1/agents/${w.agentIds.deviceA1}${path}`;
    const ingest = await request(w.t.baseUrl)
      .post(agent('/elevation-requests'))
      .set(bearer(w.agentTokens.deviceA1))
      .send({
        subject_username: 'CORP\\alice',
        target_executable_path: 'C:\\Program Files\\Vendor\\installer.exe',
        target_executable_hash: 'ab'.repeat(32),
        target_executable_signer: 'Vendor Ltd',
        pid: 4242,
        parent_image: 'C:\\Windows\\explorer.exe',
        command_line: 'installer.exe /quiet',
        observed_at: new Date().toISOString(),
      })
      .expect(201);
    expect(ingest.body).toMatchObject({ id: expect.any(String), status: 'pending' });
    const id = ingest.body.id as string;

    // The push to the approver's phone is queued with the request (its delivery, retries and give-up are
    // mobile-approvals' tests). No push worker runs here: a worker run claims every due push on the run's database,
    // and mobile-approvals, running beside this file, scripts its gateway's answers and counts its own deliveries.
    const queued = await ownerQuery<{ owner: string; platform: string }>(
      `SELECT md.user_id AS owner, md.platform FROM push_outbox o
         JOIN pam_approval_requests a ON a.org_id = o.org_id AND a.id = o.approval_request_id
         JOIN mobile_devices md ON md.id = o.mobile_device_id
        WHERE a.elevation_request_id = $1`,
      [id],
    );
    expect(queued).toContainEqual({ owner: w.ids.techA, platform: 'ios' });
    const mine = await request(w.t.baseUrl).get('/api/v1/approvals').set(bearer(w.plain.techA)).expect(200);
    const approval = mine.body.approvals.find((a: { elevationRequestId: string }) => a.elevationRequestId === id);
    expect(approval).toMatchObject({ deviceId: w.ids.deviceA1, targetExecutablePath: 'C:\\Program Files\\Vendor\\installer.exe' });

    await decide(w, w.mfa.techA, approval.id, { decision: 'approve', durationMinutes: 20 }).expect(200);
    const actuation = await request(w.t.baseUrl)
      .post(`/api/v1/devices/${w.ids.deviceA1}/actuate-elevation`)
      .set(bearer(w.mfa.techA))
      .send({ elevationRequestId: id })
      .expect(201);

    const fetched = await request(w.t.baseUrl).get(agent('/commands')).set(bearer(w.agentTokens.deviceA1)).expect(200);
    expect(fetched.body.commands).toEqual([{ id: actuation.body.commandId, type: 'actuate_elevation', payload: { elevationRequestId: id, timeoutMs: 8000 }, createdAt: expect.any(String), deliveryCount: 1 }]);
    await request(w.t.baseUrl).post(agent(`/commands/${actuation.body.commandId}/result`)).set(bearer(w.agentTokens.deviceA1)).send({ status: 'completed' }).expect(200);

    const active = await request(w.t.baseUrl).get('/api/v1/pam/active').set(bearer(w.plain.adminA)).expect(200);
    expect(active.body.active.find((a: { id: string }) => a.id === id)).toMatchObject({ status: 'actuating', approvedByName: 'Tech A', decisionSource: 'human' });

    await revoke(w, w.mfa.adminA, id, { reason: 'Installation finished' }).expect(200);
    const revokeCommand = await request(w.t.baseUrl).get(agent('/commands')).set(bearer(w.agentTokens.deviceA1)).expect(200);
    expect(revokeCommand.body.commands).toEqual([expect.objectContaining({ type: 'revoke_elevation', payload: { elevationRequestId: id } })]);

    expect((await eventsOf(id)).map((e) => [e.type, e.from_status, e.to_status])).toEqual([
      ['created', null, 'pending'],
      ['approved', 'pending', 'approved'],
      ['actuation_claimed', 'approved', 'actuating'],
      ['actuation_completed', 'actuating', 'actuating'],
      ['revoked', 'actuating', 'revoked'],
    ]);
    expect((await auditOf(id)).map((a) => a.action)).toEqual(['pam.elevation.request', 'pam.elevation.approve', 'pam.elevation.actuate', 'pam.elevation.revoke']);
    expect(await storedRequest(id)).toMatchObject({ status: 'revoked', revoked_by_name: 'Admin A', revoke_reason: 'Installation finished' });
    const [approvalRow] = await ownerQuery<{ status: string }>('SELECT status FROM pam_approval_requests WHERE id = $1', [approval.id]);
    expect(approvalRow.status).toBe('approved');
  });
});
