import { createHash, randomUUID } from 'node:crypto';
import request from 'supertest';
import { ownerQuery } from '../../support/test-app';
import { approvalsOf, auditOf, bearer, eventsOf, list, PamWorld, registerPhone, respond, startPamWorld, storedRequest } from './pam-lifecycle.kit';

function jit(w: PamWorld, token: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post('/api/v1/pam/jit-requests').set(bearer(token)).send(body);
}

function toolAction(w: PamWorld, token: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post('/api/v1/pam/tool-actions').set(bearer(token)).send(body);
}

describe('just-in-time admin and AI tool-action flows', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
    for (const user of ['adminA', 'tech', 'techA']) await registerPhone(w, user, `flows-${user}-${w.ids[user]}`).expect(201);
  });
  afterAll(() => w.t.close());

  async function withRule<T>(org: 'orgA' | 'orgB', rule: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
    const admin = org === 'orgA' ? w.mfa.adminA : w.mfa.adminB;
    const created = await request(w.t.baseUrl).post('/api/v1/pam/rules').set(bearer(admin)).send(rule).expect(201);
    try {
      return await fn();
    } finally {
      await request(w.t.baseUrl).delete(`/api/v1/pam/rules/${created.body.rule.id}`).set(bearer(admin)).expect(200);
    }
  }

  async function withOrgDefault<T>(verdict: 'auto_deny', fn: () => Promise<T>): Promise<T> {
    await request(w.t.baseUrl).put('/api/v1/pam/config').set(bearer(w.mfa.adminA)).send({ defaultUnmatchedVerdict: verdict }).expect(200);
    try {
      return await fn();
    } finally {
      await request(w.t.baseUrl).put('/api/v1/pam/config').set(bearer(w.mfa.adminA)).send({ defaultUnmatchedVerdict: 'require_approval' }).expect(200);
    }
  }

  describe('POST /pam/jit-requests', () => {
    it('records a pending tech_jit_admin request for the caller and notifies the other eligible technicians', async () => {
      const res = await jit(w, w.mfa.tech, { deviceId: w.ids.deviceA1, durationMinutes: 60, reason: 'Install the printer driver' }).expect(201);
      expect(res.body).toEqual({ success: true, id: expect.any(String), status: 'pending', expiresAt: null });
      expect(await storedRequest(res.body.id)).toMatchObject({
        flow_type: 'tech_jit_admin',
        status: 'pending',
        org_id: w.ids.orgA,
        site_id: w.ids.siteA1,
        subject_user_id: w.ids.tech,
        subject_username: w.f.emails.tech,
        reason: 'Install the printer driver',
        duration_minutes: 60,
        decision_source: null,
      });
      expect(await eventsOf(res.body.id)).toEqual([expect.objectContaining({ type: 'created', from_status: null, to_status: 'pending', actor_type: 'user' })]);
      expect((await auditOf(res.body.id)).map((a) => a.action)).toEqual(['pam.elevation.request']);
      const approvers = (await approvalsOf(res.body.id)).map((a) => a.approver_user_id).sort();
      expect(approvers).toEqual([w.ids.adminA, w.ids.techA].sort());
    });

    it('cannot be approved by its own subject, but by another technician', async () => {
      const { body } = await jit(w, w.mfa.tech, { deviceId: w.ids.deviceA1, durationMinutes: 30, reason: 'Patch' }).expect(201);
      expect((await respond(w, w.mfa.tech, body.id, { decision: 'approve' }).expect(403)).body.code).toBe('self_approval');
      await respond(w, w.mfa.techA, body.id, { decision: 'approve' }).expect(200);
    });

    it('is never decided by a rule, even one naming the technician: it waits for a human', async () => {
      await withRule('orgA', { name: 'Tech JIT', verdict: 'auto_approve', matchUser: w.f.emails.tech, approvalDurationMinutes: 30 }, async () => {
        const res = await jit(w, w.mfa.tech, { deviceId: w.ids.deviceA1, durationMinutes: 60, reason: 'r' }).expect(201);
        expect(res.body).toMatchObject({ status: 'pending', expiresAt: null });
        expect(await storedRequest(res.body.id)).toMatchObject({ status: 'pending', decision_source: null, pam_rule_id: null, duration_minutes: 60, expires_at: null });
        expect((await approvalsOf(res.body.id)).length).toBeGreaterThan(0);
      });
    });

    it('is denied by the organization default auto_deny when no rule matches', async () => {
      await withOrgDefault('auto_deny', async () => {
        const res = await jit(w, w.mfa.techA, { deviceId: w.ids.deviceA2, durationMinutes: 15, reason: 'r' }).expect(201);
        expect(res.body.status).toBe('denied');
        expect(await storedRequest(res.body.id)).toMatchObject({ status: 'denied', decision_source: 'org_default', expires_at: null });
      });
    });

    it('validates the body: duration 1 to 1440, a reason of 1 to 2000 characters, a device id', async () => {
      for (const body of [
        { deviceId: w.ids.deviceA1, durationMinutes: 0, reason: 'r' },
        { deviceId: w.ids.deviceA1, durationMinutes: 1441, reason: 'r' },
        { deviceId: w.ids.deviceA1, reason: 'r' },
        { deviceId: w.ids.deviceA1, durationMinutes: 15 },
        { deviceId: w.ids.deviceA1, durationMinutes: 15, reason: ' ' },
        { deviceId: w.ids.deviceA1, durationMinutes: 15, reason: 'x'.repeat(2001) },
        { deviceId: 'x', durationMinutes: 15, reason: 'r' },
        { deviceId: w.ids.deviceA1, durationMinutes: 15, reason: 'r', subjectUserId: w.ids.adminA },
      ]) {
        expect((await jit(w, w.mfa.tech, body).expect(400)).body.code).toBe('validation_failed');
      }
      await jit(w, w.mfa.tech, { deviceId: w.ids.deviceA1, durationMinutes: 1440, reason: 'x'.repeat(2000) }).expect(201);
    });

    it('needs MFA and devices:execute, refuses other sites and tenants and decommissioned devices', async () => {
      const body = { deviceId: w.ids.deviceA2, durationMinutes: 15, reason: 'r' };
      expect((await jit(w, w.plain.tech, body).expect(403)).body.code).toBe('mfa_required');
      expect((await jit(w, w.mfa.readerA, body).expect(403)).body.code).toBe('forbidden');
      expect((await jit(w, w.mfa.siteA1User, body).expect(403)).body.code).toBe('site_access_denied');
      expect((await jit(w, w.mfa.adminB, body).expect(404)).body.code).toBe('not_found');
      await jit(w, w.mfa.tech, { ...body, deviceId: randomUUID() }).expect(404);
      await ownerQuery(`UPDATE devices SET status = 'decommissioned' WHERE id = $1`, [w.ids.deviceB1]);
      try {
        expect((await jit(w, w.mfa.adminB, { ...body, deviceId: w.ids.deviceB1 }).expect(400)).body.code).toBe('device_decommissioned');
      } finally {
        await ownerQuery(`UPDATE devices SET status = 'active' WHERE id = $1`, [w.ids.deviceB1]);
      }
    });
  });

  describe('POST /pam/tool-actions', () => {
    it('records the tool, its tier from the registry and the digest of the canonical input', async () => {
      const res = await toolAction(w, w.plain.adminA, { deviceId: w.ids.deviceA1, toolName: 'kill_process', input: { signal: 'TERM', pid: 4242 } }).expect(201);
      const digest = createHash('sha256').update('{"pid":4242,"signal":"TERM"}').digest('hex');
      expect(res.body).toEqual({ success: true, id: expect.any(String), status: 'pending', expiresAt: null, toolName: 'kill_process', riskTier: 2, actionDigest: digest });
      expect(await storedRequest(res.body.id)).toMatchObject({ flow_type: 'ai_tool_action', tool_name: 'kill_process', tool_action: null, risk_tier: 2, action_digest: digest, subject_username: w.f.emails.adminA });
      const listed = await list(w, w.plain.adminA, { flowType: 'ai_tool_action' }).expect(200);
      expect(listed.body.requests.find((r: { id: string }) => r.id === res.body.id)).toMatchObject({ toolName: 'kill_process', riskTier: 2, actionDigest: digest });
      // Every eligible approver with a phone but the one who filed it: nobody approves their own request.
      const approvers = (await approvalsOf(res.body.id)).map((a) => a.approver_user_id);
      expect(approvers).toHaveLength(2);
      expect(approvers).not.toContain(w.ids.adminA);
    });

    it('takes the tier of the named action, and none for a tool the registry does not know', async () => {
      const user = await toolAction(w, w.plain.adminA, { deviceId: w.ids.deviceA1, toolName: 'run_script', action: 'user', input: 'whoami' }).expect(201);
      expect(user.body.riskTier).toBe(3);
      const unknown = await toolAction(w, w.plain.adminA, { deviceId: w.ids.deviceA1, toolName: 'teleport', input: [] }).expect(201);
      expect(unknown.body).toMatchObject({ riskTier: null, status: 'pending' });
    });

    it('is decided by tool-action rules only: an executable-side rule on the same user does not apply', async () => {
      await withRule('orgA', { name: 'Kill ok', verdict: 'auto_approve', matchToolName: 'kill_process', matchRiskTier: 2, approvalDurationMinutes: 5 }, async () => {
        await withRule('orgA', { name: 'Deny admin A', verdict: 'auto_deny', matchUser: w.f.emails.adminA, priority: 1 }, async () => {
          const killed = await toolAction(w, w.plain.adminA, { deviceId: w.ids.deviceA1, toolName: 'kill_process', input: { pid: 1 } }).expect(201);
          expect(killed.body.status).toBe('auto_approved');
          expect(await storedRequest(killed.body.id)).toMatchObject({ decision_source: 'pam_rule', pam_rule_name: 'Kill ok', duration_minutes: 5 });
          const other = await toolAction(w, w.plain.adminA, { deviceId: w.ids.deviceA1, toolName: 'reboot_device', input: {} }).expect(201);
          expect(other.body.status).toBe('pending');
        });
      });
    });

    it('falls to the organization default when no tool-action rule matches', async () => {
      await withOrgDefault('auto_deny', async () => {
        const res = await toolAction(w, w.plain.adminA, { deviceId: w.ids.deviceA1, toolName: 'edit_registry', input: { key: 'HKLM\\x' } }).expect(201);
        expect(res.body).toMatchObject({ status: 'denied', riskTier: 4 });
      });
    });

    it('validates the body and the caller', async () => {
      for (const body of [
        { deviceId: w.ids.deviceA1, toolName: 'kill_process' },
        { deviceId: w.ids.deviceA1, toolName: 'kill_process', input: null },
        { deviceId: w.ids.deviceA1, toolName: '', input: {} },
        { deviceId: w.ids.deviceA1, toolName: 'x'.repeat(256), input: {} },
        { deviceId: w.ids.deviceA1, toolName: 'kill_process', action: '', input: {} },
        { deviceId: w.ids.deviceA1, toolName: 'kill_process', input: {}, riskTier: 0 },
      ]) {
        expect((await toolAction(w, w.plain.adminA, body).expect(400)).body.code).toBe('validation_failed');
      }
      expect((await toolAction(w, w.plain.readerA, { deviceId: w.ids.deviceA1, toolName: 'kill_process', input: {} }).expect(403)).body.code).toBe('forbidden');
      expect((await toolAction(w, w.plain.siteA1User, { deviceId: w.ids.deviceA2, toolName: 'kill_process', input: {} }).expect(403)).body.code).toBe('site_access_denied');
      await toolAction(w, w.plain.adminB, { deviceId: w.ids.deviceA1, toolName: 'kill_process', input: {} }).expect(404);
    });
  });
});
