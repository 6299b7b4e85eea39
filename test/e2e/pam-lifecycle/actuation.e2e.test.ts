import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ownerQuery } from '../../support/test-app';
import { auditOf, bearer, commandsOf, eventsOf, PamWorld, revoke, seedRequest, startPamWorld, storedRequest } from './pam-lifecycle.kit';

function actuate(w: PamWorld, token: string, deviceId: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post(`/api/v1/devices/${deviceId}/actuate-elevation`).set(bearer(token)).send(body);
}

function fetchCommands(w: PamWorld, device: string, token = w.agentTokens[device]) {
  return request(w.t.baseUrl).get(`/api/v1/agents/${w.agentIds[device]}/commands`).set(bearer(token));
}

function report(w: PamWorld, device: string, commandId: string, body: Record<string, unknown>, token = w.agentTokens[device]) {
  return request(w.t.baseUrl).post(`/api/v1/agents/${w.agentIds[device]}/commands/${commandId}/result`).set(bearer(token)).send(body);
}

describe('actuation and agent commands (spec P4.5)', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
  });
  afterAll(() => w.t.close());

  describe('POST /devices/:id/actuate-elevation', () => {
    it('claims an approved request and queues an actuate_elevation command carrying only the request id and the timeout', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      const res = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      expect(res.body).toEqual({ success: true, commandId: expect.any(String), elevationRequestId: id });
      expect(await storedRequest(id)).toMatchObject({ status: 'actuating', actuated_at: expect.any(Date) });
      const commands = await commandsOf(id);
      expect(commands).toEqual([{ id: res.body.commandId, type: 'actuate_elevation', status: 'queued', payload: { elevationRequestId: id, timeoutMs: 8000 }, error: null }]);
      expect(await eventsOf(id)).toEqual([expect.objectContaining({ type: 'actuation_claimed', from_status: 'approved', to_status: 'actuating' })]);
      expect((await auditOf(id)).map((a) => a.action)).toEqual(['pam.elevation.actuate']);
    });

    it('accepts timeoutMs from 1000 to 60000 and rejects anything else with 400', async () => {
      for (const timeoutMs of [1000, 60000]) {
        const id = await seedRequest(w, { status: 'approved' });
        const res = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id, timeoutMs }).expect(201);
        expect((await commandsOf(id))[0].payload).toEqual({ elevationRequestId: id, timeoutMs });
        expect(res.body.commandId).toBeDefined();
      }
      const id = await seedRequest(w, { status: 'approved' });
      for (const body of [{ elevationRequestId: id, timeoutMs: 999 }, { elevationRequestId: id, timeoutMs: 60001 }, { elevationRequestId: id, timeoutMs: 1500.5 }, {}, { elevationRequestId: 'x' }, { elevationRequestId: id, extra: 1 }]) {
        expect((await actuate(w, w.mfa.adminA, w.ids.deviceA1, body).expect(400)).body.code).toBe('validation_failed');
      }
      expect((await actuate(w, w.mfa.adminA, 'not-a-uuid', { elevationRequestId: id }).expect(400)).body.code).toBe('invalid_id');
      expect((await storedRequest(id)).status).toBe('approved');
    });

    it('answers 409 wrong_status with the current status for a request that is not approved', async () => {
      for (const status of ['pending', 'auto_approved', 'denied', 'revoked']) {
        const id = await seedRequest(w, { status });
        const res = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(409);
        expect(res.body).toMatchObject({ code: 'wrong_status', currentStatus: status });
        expect(await commandsOf(id)).toEqual([]);
      }
    });

    it('answers 409 race_lost for a request already being actuated', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      const res = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(409);
      expect(res.body).toMatchObject({ code: 'race_lost', error: 'Elevation request already being actuated' });
      expect(await commandsOf(id)).toHaveLength(1);
    });

    it('never actuates an approval whose window has ended, even before the sweeper ran', async () => {
      const id = await seedRequest(w, { status: 'approved', expiresInMinutes: -1 });
      const res = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(409);
      expect(res.body).toMatchObject({ code: 'wrong_status', currentStatus: 'expired' });
      expect(await commandsOf(id)).toEqual([]);
    });

    it('refuses an AI tool action with 400 flow_not_actuatable', async () => {
      const id = await seedRequest(w, { status: 'approved', flowType: 'ai_tool_action', toolName: 'kill_process', riskTier: 2 });
      const res = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(400);
      expect(res.body.code).toBe('flow_not_actuatable');
    });

    it('answers 404 for an unknown device, another tenant\'s device, and a request of another device', async () => {
      const id = await seedRequest(w, { status: 'approved', device: 'deviceA1' });
      await actuate(w, w.mfa.adminA, randomUUID(), { elevationRequestId: id }).expect(404);
      await actuate(w, w.mfa.adminB, w.ids.deviceA1, { elevationRequestId: id }).expect(404);
      const other = await actuate(w, w.mfa.adminA, w.ids.deviceA2, { elevationRequestId: id }).expect(404);
      expect(other.body.error).toBe('Elevation request not found');
      await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: randomUUID() }).expect(404);
      expect((await storedRequest(id)).status).toBe('approved');
    });

    it('needs devices:execute, MFA and access to the device\'s site', async () => {
      const id = await seedRequest(w, { status: 'approved', device: 'deviceA2' });
      expect((await actuate(w, w.plain.adminA, w.ids.deviceA2, { elevationRequestId: id }).expect(403)).body.code).toBe('mfa_required');
      expect((await actuate(w, w.mfa.readerA, w.ids.deviceA2, { elevationRequestId: id }).expect(403)).body.code).toBe('forbidden');
      expect((await actuate(w, w.mfa.siteA1User, w.ids.deviceA2, { elevationRequestId: id }).expect(403)).body.code).toBe('site_access_denied');
      expect((await storedRequest(id)).status).toBe('approved');
    });

    it('refuses a decommissioned device with 400', async () => {
      const id = await seedRequest(w, { status: 'approved', device: 'deviceB1' });
      await ownerQuery(`UPDATE devices SET status = 'decommissioned' WHERE id = $1`, [w.ids.deviceB1]);
      try {
        const res = await actuate(w, w.mfa.adminB, w.ids.deviceB1, { elevationRequestId: id }).expect(400);
        expect(res.body.code).toBe('device_decommissioned');
      } finally {
        await ownerQuery(`UPDATE devices SET status = 'active' WHERE id = $1`, [w.ids.deviceB1]);
      }
    });

    it('is refused with 403 when the PAM actuator is not enabled', async () => {
      const off = await startPamWorld({ PAM_ACTUATOR_ENABLED: 'false' });
      try {
        const id = await seedRequest(off, { status: 'approved' });
        const res = await actuate(off, off.mfa.adminA, off.ids.deviceA1, { elevationRequestId: id }).expect(403);
        expect(res.body.code).toBe('pam_actuator_disabled');
        expect((await storedRequest(id)).status).toBe('approved');
      } finally {
        await off.t.close();
      }
    });
  });

  describe('agent commands', () => {
    it('hands each queued command to the device\'s agent once, and refuses another agent\'s token', async () => {
      const id = await seedRequest(w, { status: 'approved', device: 'deviceA2' });
      const { body } = await actuate(w, w.mfa.adminA, w.ids.deviceA2, { elevationRequestId: id, timeoutMs: 5000 }).expect(201);
      const other = await fetchCommands(w, 'deviceA2', w.agentTokens.deviceA1).expect(401);
      expect(other.body.code).toBe('unauthenticated');
      const first = await fetchCommands(w, 'deviceA2').expect(200);
      expect(first.body.commands).toEqual([{ id: body.commandId, type: 'actuate_elevation', payload: { elevationRequestId: id, timeoutMs: 5000 }, createdAt: expect.any(String), deliveryCount: 1 }]);
      expect((await fetchCommands(w, 'deviceA2').expect(200)).body.commands).toEqual([]);
      expect((await commandsOf(id))[0].status).toBe('delivered');
    });

    it('keeps the request actuating after a completed actuation and records the result once', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      const { body } = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      await fetchCommands(w, 'deviceA1').expect(200);
      const res = await report(w, 'deviceA1', body.commandId, { status: 'completed' }).expect(200);
      expect(res.body).toEqual({ success: true, commandId: body.commandId, status: 'completed' });
      expect((await storedRequest(id)).status).toBe('actuating');
      expect((await eventsOf(id)).map((e) => [e.type, e.from_status, e.to_status])).toEqual([
        ['actuation_claimed', 'approved', 'actuating'],
        ['actuation_completed', 'actuating', 'actuating'],
      ]);
      const again = await report(w, 'deviceA1', body.commandId, { status: 'failed' }).expect(409);
      expect(again.body).toMatchObject({ code: 'command_already_reported', currentStatus: 'completed' });
    });

    it('returns the request to approved after a failed actuation, so it can be actuated again', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      const first = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      await fetchCommands(w, 'deviceA1').expect(200);
      await report(w, 'deviceA1', first.body.commandId, { status: 'failed', error: 'Consent prompt was gone' }).expect(200);
      expect(await storedRequest(id)).toMatchObject({ status: 'approved', actuated_at: null });
      expect((await commandsOf(id))[0]).toMatchObject({ status: 'failed', error: 'Consent prompt was gone' });
      expect((await eventsOf(id)).at(-1)).toMatchObject({ type: 'actuation_failed', from_status: 'actuating', to_status: 'approved', details: expect.objectContaining({ error: 'Consent prompt was gone' }) });
      const second = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      expect(second.body.commandId).not.toBe(first.body.commandId);
    });

    it('leaves a request whose window ended during a failed actuation expired, not approved', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      const { body } = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      await fetchCommands(w, 'deviceA1').expect(200);
      await ownerQuery(`UPDATE elevation_requests SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      await report(w, 'deviceA1', body.commandId, { status: 'failed' }).expect(200);
      expect((await storedRequest(id)).status).toBe('actuating');
      expect((await eventsOf(id)).at(-1)).toMatchObject({ type: 'actuation_failed', from_status: 'expired', to_status: 'expired' });
      expect((await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(409)).body.currentStatus).toBe('expired');
    });

    it('withdraws an actuation revoked before the agent fetched it and delivers the revoke instead', async () => {
      const id = await seedRequest(w, { status: 'approved', device: 'deviceA2' });
      await fetchCommands(w, 'deviceA2').expect(200);
      await actuate(w, w.mfa.adminA, w.ids.deviceA2, { elevationRequestId: id }).expect(201);
      await revoke(w, w.mfa.adminA, id, { reason: 'Wrong device' }).expect(200);
      const res = await fetchCommands(w, 'deviceA2').expect(200);
      expect(res.body.commands).toEqual([expect.objectContaining({ type: 'revoke_elevation', payload: { elevationRequestId: id } })]);
      expect((await commandsOf(id)).map((c) => [c.type, c.status])).toEqual([
        ['actuate_elevation', 'failed'],
        ['revoke_elevation', 'delivered'],
      ]);
    });

    it('answers 404 for another device\'s command and 400 for a bad result body', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      const { body } = await actuate(w, w.mfa.adminA, w.ids.deviceA1, { elevationRequestId: id }).expect(201);
      expect((await report(w, 'deviceA2', body.commandId, { status: 'completed' }).expect(404)).body.code).toBe('not_found');
      for (const bad of [{}, { status: 'done' }, { status: 'failed', error: 'x'.repeat(2001) }, { status: 'completed', extra: 1 }]) {
        expect((await report(w, 'deviceA1', body.commandId, bad).expect(400)).body.code).toBe('validation_failed');
      }
      expect((await report(w, 'deviceA1', 'nope', { status: 'completed' }).expect(400)).body.code).toBe('invalid_id');
      await report(w, 'deviceA1', body.commandId, { status: 'completed' }, 'not-a-token').expect(401);
      await report(w, 'deviceA1', body.commandId, { status: 'failed', error: 'x'.repeat(2000) }).expect(200);
    });
  });
});
