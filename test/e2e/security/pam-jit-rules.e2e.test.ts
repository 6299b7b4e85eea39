import request from 'supertest';
import { prompt } from '../agent/agent-kit';
import { approvalsOf, bearer, PamWorld, registerPhone, startPamWorld, storedRequest } from '../pam-lifecycle/pam-lifecycle.kit';

/**
 * Issue 13, item 8: PAM rules are written for observed prompts (uac_intercept) or for tool
 * actions; a just-in-time admin request is never decided by one, only by the organization default.
 */
describe('attack: a UAC rule used to auto-approve just-in-time admin requests', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
    await registerPhone(w, 'techA', `jit-rules-${w.ids.techA}`).expect(201);
  });
  afterAll(() => w.t.close());

  function createRule(rule: Record<string, unknown>) {
    return request(w.t.baseUrl).post('/api/v1/pam/rules').set(bearer(w.mfa.adminA)).send(rule).expect(201);
  }

  async function withRule<T>(rule: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
    const created = await createRule(rule);
    try {
      return await fn();
    } finally {
      await request(w.t.baseUrl).delete(`/api/v1/pam/rules/${created.body.rule.id}`).set(bearer(w.mfa.adminA)).expect(200);
    }
  }

  function jit(durationMinutes: number) {
    return request(w.t.baseUrl)
      .post('/api/v1/pam/jit-requests')
      .set(bearer(w.mfa.tech))
      .send({ deviceId: w.ids.deviceA1, durationMinutes, reason: 'Need admin for a day' })
      .expect(201);
  }

  function ingest(subject: string) {
    return request(w.t.baseUrl)
      .post(`/api/v1/agents/${w.agentIds.deviceA1}/elevation-requests`)
      .set(bearer(w.agentTokens.deviceA1))
      .send(prompt({ subject_username: subject }))
      .expect(201);
  }

  it('a negated-user auto_approve rule leaves a 1,440-minute JIT request pending for a human', async () => {
    const rule = { name: 'Everyone but the intern', verdict: 'auto_approve', matchUser: 'CORP\\intern', matchNegate: ['user'], approvalDurationMinutes: 1440 };
    await withRule(rule, async () => {
      const res = await jit(1440);
      expect(res.body).toMatchObject({ status: 'pending', expiresAt: null });
      expect(await storedRequest(res.body.id)).toMatchObject({ status: 'pending', pam_rule_id: null, decision_source: null, expires_at: null });
      expect((await approvalsOf(res.body.id)).map((a) => a.approver_user_id)).toContain(w.ids.techA);
    });
  });

  it('a rule naming the technician exactly does not auto-approve his JIT request either', async () => {
    await withRule({ name: 'Tech', verdict: 'auto_approve', matchUser: w.f.emails.tech }, async () => {
      const res = await jit(60);
      expect(res.body.status).toBe('pending');
      expect(await storedRequest(res.body.id)).toMatchObject({ pam_rule_id: null });
    });
  });

  it('no rule shape reaches a JIT request: auto_deny and require_approval rules are not recorded on it', async () => {
    await withRule({ name: 'Deny tech', verdict: 'auto_deny', matchUser: w.f.emails.tech, priority: 1 }, async () => {
      const res = await jit(30);
      expect(res.body.status).toBe('pending');
      expect(await storedRequest(res.body.id)).toMatchObject({ pam_rule_id: null, pam_rule_name: null });
    });
  });

  it('the same negated-user rule still decides observed UAC prompts, which it was written for', async () => {
    await withRule({ name: 'Everyone but the intern', verdict: 'auto_approve', matchUser: 'CORP\\intern', matchNegate: ['user'] }, async () => {
      expect((await ingest('CORP\\alice')).body.status).toBe('auto_approved');
      expect((await ingest('CORP\\intern')).body.status).toBe('pending');
    });
  });

  it('a rule preview counts no JIT request as matched by a rule', async () => {
    const res = await request(w.t.baseUrl)
      .post('/api/v1/pam/rules/preview')
      .set(bearer(w.mfa.adminA))
      .send({ matchUser: 'CORP\\intern', matchNegate: ['user'], flowType: 'tech_jit_admin', orgId: w.ids.orgA })
      .expect(200);
    expect(res.body.totalScanned).toBeGreaterThan(0);
    expect(res.body.totalMatched).toBe(0);
  });
});
