import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { AgentKit, prompt, sha256 } from './agent-kit';

const SETUP = { target_executable_path: 'C:\\Program Files\\Contoso\\setup.exe', target_executable_hash: sha256('setup.exe'), target_executable_signer: 'Contoso Ltd' };

/** HH:MM in UTC, `minutes` from now (wrapping round midnight). */
function utcClock(minutes: number): string {
  const d = new Date(Date.now() + minutes * 60_000);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
}

const minutesBetween = (a: unknown, b: unknown) => Math.round(((b as Date).getTime() - (a as Date).getTime()) / 60_000);

describe('agent ingest: the decision chain (software policies, rules, organization default)', () => {
  let t: TestApp;
  let k: AgentKit;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
    // Phones for three approvers: the partner technician (every site), an admin limited to site A1, and org B's admin.
    for (const who of ['tech', 'siteA1User', 'adminB']) {
      const token = await t.token(k.ids[who]);
      await request(t.http).post('/api/v1/mobile-devices').set('Authorization', `Bearer ${token}`).send({ platform: 'ios', pushToken: `push-${who}` }).expect(201);
    }
  });
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
    await k.clearRules('orgA');
    await ownerQuery(`DELETE FROM pam_org_config WHERE org_id = $1`, [k.ids.orgA]);
  });
  afterAll(() => t.close());

  async function software(mode: string, entries: object[], targets: { targetType: string; targetId: string; priority?: number }[], who = 'adminA', extra: object = {}): Promise<string> {
    const id = await k.policy(who, { name: `${mode} ${Math.random().toString(36).slice(2, 8)}`, features: { software: { mode, entries } }, ...extra }, targets);
    cleanups.push(() => k.deletePolicy(who, id));
    return id;
  }
  const orgTarget = () => [{ targetType: 'organization', targetId: k.ids.orgA }];

  async function ingest(device = 'deviceA1', body: Record<string, unknown> = {}) {
    const res = await k.ingest(device, prompt({ ...SETUP, ...body }));
    expect([200, 201]).toContain(res.status);
    return { body: res.body, row: res.body.id ? await k.request(res.body.id) : null };
  }

  describe('software-policy bridge', () => {
    it('denies a blocklisted executable before any rule runs', async () => {
      const policy = await software('blocklist', [{ name: 'SETUP.EXE' }], orgTarget());
      await k.rule('orgA', { verdict: 'auto_approve', match_path_glob: 'C:\\Program Files\\**' });
      const { body, row } = await ingest();
      expect(body.status).toBe('denied');
      expect(row).toMatchObject({ status: 'denied', decision_source: 'software_policy', matched_policy_id: policy, pam_rule_id: null, expires_at: null });
      expect(row!.decided_at).not.toBeNull();
      const [audit] = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1`, [body.id]);
      expect(audit.action).toBe('pam.elevation.auto_deny');
      expect(await ownerQuery(`SELECT to_status FROM pam_elevation_events WHERE elevation_request_id = $1`, [body.id])).toEqual([{ to_status: 'denied' }]);
    });

    it('auto-approves an allowlisted executable for 15 minutes, even against a denying rule', async () => {
      const policy = await software('allowlist', [{ sha256: sha256('setup.exe').toUpperCase() }], orgTarget());
      await k.rule('orgA', { verdict: 'auto_deny', match_path_glob: '**\\setup.exe', approval_duration_minutes: 120 });
      const { body, row } = await ingest();
      expect(body.status).toBe('auto_approved');
      expect(row).toMatchObject({ decision_source: 'software_policy', matched_policy_id: policy, duration_minutes: 15, pam_rule_id: null });
      expect(minutesBetween(row!.requested_at, row!.expires_at)).toBe(15);
    });

    it('lets a blocklist hit beat an allowlist hit, even when the allowlist is assigned closer', async () => {
      await software('allowlist', [{ name: 'setup.exe' }], [{ targetType: 'device', targetId: k.ids.deviceA1 }]);
      const block = await software('blocklist', [{ signer: 'contoso ltd' }], [{ targetType: 'partner', targetId: k.ids.partner }], 'tech', { scope: 'partner' });
      const { row } = await ingest();
      expect(row).toMatchObject({ status: 'denied', decision_source: 'software_policy', matched_policy_id: block });
    });

    it('attaches audit evidence and lets the rules decide', async () => {
      const audit = await software('audit', [{ pathGlob: 'C:\\Program Files\\*\\*.exe' }, { name: 'other.exe' }], orgTarget());
      const rule = await k.rule('orgA', { name: 'Contoso installers', verdict: 'auto_deny', match_signer: 'Contoso Ltd' });
      const { row } = await ingest();
      expect(row).toMatchObject({ status: 'denied', decision_source: 'pam_rule', pam_rule_id: rule, pam_rule_name: 'Contoso installers', matched_policy_id: audit });
      expect(row!.software_evidence).toEqual([{ policyId: audit, policyName: expect.any(String), mode: 'audit', entryIndex: 0, entry: { pathGlob: 'C:\\Program Files\\*\\*.exe' } }]);
    });

    it('applies only enabled policies that reach the device', async () => {
      await software('blocklist', [{ name: 'setup.exe' }], orgTarget(), 'adminA', { enabled: false });
      await software('blocklist', [{ name: 'setup.exe' }], [{ targetType: 'site', targetId: k.ids.siteA2 }]);
      await software('blocklist', [{ name: 'setup.exe' }], [{ targetType: 'organization', targetId: k.ids.orgB }], 'adminB');
      expect((await ingest('deviceA1')).row).toMatchObject({ status: 'pending', matched_policy_id: null });
      expect((await ingest('deviceA2')).row).toMatchObject({ status: 'denied', decision_source: 'software_policy' });
    });

    it('reaches a device through its device group', async () => {
      const policy = await software('blocklist', [{ name: 'setup.exe' }], [{ targetType: 'device_group', targetId: k.ids.groupA1 }]);
      expect((await ingest('deviceA1')).row).toMatchObject({ status: 'denied', matched_policy_id: policy });
      expect((await ingest('deviceA2')).row).toMatchObject({ status: 'pending' });
    });
  });

  describe('rules', () => {
    it('takes the lowest priority number first', async () => {
      await k.rule('orgA', { verdict: 'auto_deny', priority: 10, match_path_glob: '**\\setup.exe' });
      const first = await k.rule('orgA', { verdict: 'auto_approve', priority: 5, match_signer: 'contoso ltd' });
      expect((await ingest()).row).toMatchObject({ status: 'auto_approved', pam_rule_id: first, decision_source: 'pam_rule' });
    });

    it('breaks priority ties by creation time, then by id', async () => {
      const older = await k.rule('orgA', { verdict: 'require_approval', priority: 7, match_signer: 'Contoso Ltd', created_at: '2025-01-01T00:00:00Z' });
      await k.rule('orgA', { verdict: 'auto_deny', priority: 7, match_signer: 'Contoso Ltd', created_at: '2025-02-01T00:00:00Z' });
      expect((await ingest()).row).toMatchObject({ status: 'pending', pam_rule_id: older });
      await k.clearRules('orgA');
      const same = '2025-03-01T00:00:00Z';
      // Ids unique to this run (the file also runs through PgBouncer on the same database), ordered by their first group.
      const tail = randomUUID().slice(8);
      const [high, low] = [`ffffffff${tail}`, `00000000${tail}`];
      await k.rule('orgA', { id: high, verdict: 'auto_deny', priority: 7, match_signer: 'Contoso Ltd', created_at: same });
      await k.rule('orgA', { id: low, verdict: 'auto_approve', priority: 7, match_signer: 'Contoso Ltd', created_at: same });
      expect((await ingest()).row).toMatchObject({ status: 'auto_approved', pam_rule_id: low });
    });

    it('uses the rule\'s approval window, else the organization default window', async () => {
      await k.rule('orgA', { verdict: 'auto_approve', match_signer: 'Contoso Ltd', approval_duration_minutes: 90 });
      const withWindow = (await ingest()).row!;
      expect(minutesBetween(withWindow.requested_at, withWindow.expires_at)).toBe(90);
      await k.clearRules('orgA');
      await k.orgConfig('orgA', 'require_approval', 45);
      await k.rule('orgA', { verdict: 'auto_approve', match_signer: 'Contoso Ltd' });
      const byDefault = (await ingest()).row!;
      expect(byDefault).toMatchObject({ status: 'auto_approved', duration_minutes: 45 });
      expect(minutesBetween(byDefault.requested_at, byDefault.expires_at)).toBe(45);
    });

    it('applies a site-scoped rule on its site only', async () => {
      await k.rule('orgA', { verdict: 'auto_deny', site_id: k.ids.siteA2, match_signer: 'Contoso Ltd' });
      expect((await ingest('deviceA1')).row).toMatchObject({ status: 'pending', pam_rule_id: null });
      expect((await ingest('deviceA2')).row).toMatchObject({ status: 'denied', decision_source: 'pam_rule' });
    });

    it('never applies another organization\'s rules or tool-action rules to a prompt', async () => {
      await k.rule('orgB', { verdict: 'auto_deny', match_signer: 'Contoso Ltd' });
      await k.rule('orgA', { verdict: 'auto_deny', match_tool_name: 'run_script' });
      expect((await ingest('deviceA1')).row).toMatchObject({ status: 'pending', pam_rule_id: null });
      expect((await ingest('deviceB1')).row).toMatchObject({ status: 'denied' });
      await k.clearRules('orgB');
    });

    it('writes nothing for an ignore rule and answers 200 ignored', async () => {
      await k.rule('orgA', { verdict: 'ignore', match_path_glob: 'C:\\Program Files\\Contoso\\*' });
      const before = await ownerQuery(`SELECT count(*)::int AS n FROM elevation_requests WHERE device_id = $1`, [k.ids.deviceA1]);
      const res = await k.ingest('deviceA1', prompt(SETUP)).expect(200);
      expect(res.body).toEqual({ id: null, status: 'ignored' });
      expect(await ownerQuery(`SELECT count(*)::int AS n FROM elevation_requests WHERE device_id = $1`, [k.ids.deviceA1])).toEqual(before);
      const other = await k.ingest('deviceA1', prompt({ target_executable_path: 'C:\\Tools\\x.exe' })).expect(201);
      expect(other.body.status).toBe('pending');
    });

    it('sees rules written through the rules API on the next request', async () => {
      const created = await request(t.http).post('/api/v1/pam/rules').set('Authorization', k.admin.adminA).send({ name: 'No Contoso', verdict: 'auto_deny', matchSigner: 'Contoso Ltd' }).expect(201);
      expect((await ingest()).row).toMatchObject({ status: 'denied', pam_rule_id: created.body.rule.id, pam_rule_name: 'No Contoso' });
      await request(t.http).delete(`/api/v1/pam/rules/${created.body.rule.id}`).set('Authorization', k.admin.adminA).expect(200);
      expect((await ingest()).row).toMatchObject({ status: 'pending', pam_rule_id: null });
    });
  });

  describe('time', () => {
    it('decides time windows on the server clock, never on the agent\'s observed_at', async () => {
      const inWindow = await k.rule('orgA', { verdict: 'auto_approve', match_signer: 'Contoso Ltd', time_window: { start: utcClock(-10), end: utcClock(10) } });
      const farAway = new Date(Date.now() - 12 * 3600_000).toISOString();
      expect((await ingest('deviceA1', { observed_at: farAway })).row).toMatchObject({ status: 'auto_approved', pam_rule_id: inWindow });
      await k.clearRules('orgA');
      await k.rule('orgA', { verdict: 'auto_deny', match_signer: 'Contoso Ltd', time_window: { start: utcClock(120), end: utcClock(180) } });
      const insideThatWindow = new Date(Date.now() + 150 * 60_000).toISOString();
      expect((await ingest('deviceA1', { observed_at: insideThatWindow })).row).toMatchObject({ status: 'pending', pam_rule_id: null });
    });
  });

  describe('organization default', () => {
    it('is require_approval without a config row, and auto_deny when configured', async () => {
      expect((await ingest()).row).toMatchObject({ status: 'pending', decision_source: null });
      await k.orgConfig('orgA', 'auto_deny');
      const { body, row } = await ingest();
      expect(body.status).toBe('denied');
      expect(row).toMatchObject({ decision_source: 'org_default', pam_rule_id: null, matched_policy_id: null });
    });

    it('records the request as pending when a rule cannot be evaluated, even under auto_deny', async () => {
      await k.orgConfig('orgA', 'auto_deny');
      await k.rule('orgA', { verdict: 'auto_approve', match_user: 'nobody', time_window: { start: '09:00', end: '17:00', timezone: 'Mars/Olympus_Mons' } });
      const { body, row } = await ingest();
      expect(body.status).toBe('pending');
      expect(row).toMatchObject({ decision_source: null, pam_rule_id: null });
      const [audit] = await ownerQuery<{ details: Record<string, unknown> }>(`SELECT details FROM audit_logs WHERE resource_id = $1`, [body.id]);
      expect(audit.details.evaluatorError).toEqual(expect.stringContaining('cannot be compiled'));
    });

    it('records the request as pending when a software policy cannot be evaluated, even with an allowlist hit', async () => {
      await k.orgConfig('orgA', 'auto_deny');
      await software('allowlist', [{ name: 'setup.exe' }], orgTarget());
      const broken = await software('blocklist', [{ name: 'other.exe' }], orgTarget());
      await ownerQuery(`UPDATE policies SET features = '{"software": {"mode": "blocklist", "entries": [{}]}}', updated_at = now() WHERE id = $1`, [broken]);
      expect((await ingest()).row).toMatchObject({ status: 'pending', decision_source: null });
    });
  });

  describe('mobile approvals', () => {
    const approvers = async (id: string) =>
      (await ownerQuery<{ approver_user_id: string }>(`SELECT approver_user_id FROM pam_approval_requests WHERE elevation_request_id = $1 ORDER BY approver_user_id`, [id])).map((r) => r.approver_user_id);

    it('asks every eligible technician with a phone, in the ingest transaction, when the request is pending', async () => {
      const onA1 = await ingest('deviceA1');
      expect(await approvers(onA1.body.id)).toEqual([k.ids.tech, k.ids.siteA1User].sort());
      const onA2 = await ingest('deviceA2');
      expect(await approvers(onA2.body.id)).toEqual([k.ids.tech]);
      const [{ n }] = await ownerQuery<{ n: number }>(
        `SELECT count(*)::int AS n FROM push_outbox o JOIN pam_approval_requests a ON a.id = o.approval_request_id WHERE a.elevation_request_id = $1`,
        [onA1.body.id],
      );
      expect(n).toBe(2);
    });

    it('asks nobody when the chain decided', async () => {
      await k.rule('orgA', { verdict: 'auto_deny', match_signer: 'Contoso Ltd' });
      const denied = await ingest('deviceA1');
      expect(denied.body.status).toBe('denied');
      expect(await approvers(denied.body.id)).toEqual([]);
    });
  });
});
