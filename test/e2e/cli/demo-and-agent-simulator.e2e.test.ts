import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { PROMPTS, simulate } from '../../../src/cli/agent-simulate';
import type { Fixture } from '../../../src/seed/fixture.types';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

/**
 * Issue 15 item 5: the demo tenant shows PAM at work (rules of every verdict, a signer group,
 * requests in every state over the last days, an enrolled device), and the agent simulator takes
 * prompts through the real agent API from ingest to approval to actuation. The demo file is loaded
 * once, by this file only: its partner, device and requests have fixed names and ids.
 */
describe('the demo tenant and the agent simulator', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let admin: string;
  const demo = JSON.parse(readFileSync(join(__dirname, '../../../src/seed/demo.json'), 'utf8')) as Fixture;
  const agent = demo.devices!.find((d) => d.agentToken)!;
  const technician = demo.users!.find((u) => u.key === 'admin')!;

  const counts = async () =>
    (
      await ownerQuery<Record<string, string>>(
        `SELECT (SELECT count(*) FROM pam_rules WHERE org_id = $1) AS rules, (SELECT count(*) FROM pam_signer_groups WHERE org_id = $1) AS groups,
                (SELECT count(*) FROM elevation_requests WHERE org_id = $1) AS requests, (SELECT count(*) FROM pam_elevation_events WHERE org_id = $1) AS events,
                (SELECT count(*) FROM device_commands WHERE org_id = $1) AS commands, (SELECT version FROM pam_rules_versions WHERE org_id = $1) AS version,
                (SELECT max(updated_at) FROM pam_rules WHERE org_id = $1) AS rules_updated`,
        [ids.org],
      )
    )[0];

  beforeAll(async () => {
    t = await startTestApp({ PAM_ACTUATOR_ENABLED: 'true' }, { listen: true });
    ids = await t.seed(demo);
    admin = await t.token(ids.admin, { mfa: true });
  });
  afterAll(() => t.close());

  it('seeds rules of every verdict, a signer group, and requests in every state spread over the last days', async () => {
    const rules = await request(t.http).get(`/api/v1/pam/rules?orgId=${ids.org}`).set('Authorization', `Bearer ${admin}`).expect(200);
    const verdicts = rules.body.rules.map((r: { verdict: string }) => r.verdict);
    for (const v of ['auto_approve', 'auto_deny', 'require_approval', 'ignore']) expect(verdicts.filter((x: string) => x === v).length).toBeGreaterThanOrEqual(2);
    const trusted = rules.body.rules.find((r: { name: string }) => r.name === 'Approve trusted vendors for 15 minutes');
    expect(trusted).toMatchObject({ matchSignerGroupId: ids.trustedVendors, approvalDurationMinutes: 15 });
    expect(rules.body.rules.find((r: { name: string }) => r.name.startsWith('Front desk')).timeWindow).toEqual({ start: '18:00', end: '07:59', days: null, timezone: 'America/New_York' });

    const groups = await request(t.http).get(`/api/v1/pam/signer-groups?orgId=${ids.org}`).set('Authorization', `Bearer ${admin}`).expect(200);
    expect(groups.body.signerGroups).toEqual([expect.objectContaining({ name: 'Trusted vendors', signers: expect.arrayContaining(['Zoom Video Communications, Inc.']) })]);

    const list = await request(t.http).get(`/api/v1/pam/elevation-requests?orgId=${ids.org}&limit=100`).set('Authorization', `Bearer ${admin}`).expect(200);
    const seeded = list.body.requests.filter((r: { id: string }) => demo.elevationRequests!.some((e) => e.id === r.id));
    expect(new Set(seeded.map((r: { status: string }) => r.status))).toEqual(new Set(['pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating']));
    const ages = seeded.map((r: { requestedAt: string }) => (Date.now() - Date.parse(r.requestedAt)) / 3_600_000);
    expect(Math.max(...ages)).toBeGreaterThan(96);
    expect(Math.min(...ages)).toBeLessThan(1);
    expect(seeded.find((r: { id: string }) => r.id === ids.reqAnyDesk)).toMatchObject({ status: 'denied', decisionSource: 'pam_rule', pamRuleName: 'Block executables run from Downloads' });
    expect(seeded.find((r: { id: string }) => r.id === ids.reqTeamViewer)).toMatchObject({ status: 'denied', decisionSource: 'human', deniedByName: 'Demo Admin' });

    const actuated = await request(t.http).get(`/api/v1/pam/elevation-requests/${ids.reqActuated}`).set('Authorization', `Bearer ${admin}`).expect(200);
    expect(actuated.body.events.map((e: { type: string }) => e.type)).toEqual(['created', 'approved', 'actuation_claimed', 'actuation_completed']);
    const revoked = await request(t.http).get(`/api/v1/pam/elevation-requests/${ids.reqRevoked}`).set('Authorization', `Bearer ${admin}`).expect(200);
    expect(revoked.body.events.map((e: { type: string; toStatus: string }) => `${e.type}:${e.toStatus}`)).toEqual(['created:pending', 'approved:approved', 'revoked:revoked']);
  });

  it('loads the demo a second time without writing anything', async () => {
    const before = await counts();
    const again = await t.seed(demo);
    expect(again).toEqual(ids);
    expect(await counts()).toEqual(before);
  });

  it('enrols the demo device whose agent token the start-up banner prints', async () => {
    const settings = await request(t.http).get(`/api/v1/agents/${agent.agentId}/pam-settings`).set('Authorization', `Bearer ${agent.agentToken}`).expect(200);
    expect(settings.body).toEqual({ uacInterceptionEnabled: true });
    const main = readFileSync(join(__dirname, '../../../src/main.ts'), 'utf8');
    expect(main).toContain('token ${demoAgent.agentToken}');
  });

  it('takes simulated prompts from ingest through approval to actuation, visible in the request list and the audit log', async () => {
    const lines: string[] = [];
    const results = await simulate({
      url: t.baseUrl,
      agentId: agent.agentId!,
      token: agent.agentToken!,
      count: PROMPTS.length,
      intervalSeconds: 0,
      waitSeconds: 10,
      manual: false,
      technician: { email: technician.email, password: technician.password!, totpSecret: technician.totpSecret },
      log: (line) => lines.push(line),
    });
    expect(results.map((r) => [r.status, r.finalStatus])).toEqual([
      ['auto_approved', 'auto_approved'],
      ['pending', 'actuating'],
      ['denied', 'denied'],
      ['ignored', 'ignored'],
      ['pending', 'actuating'],
      ['auto_approved', 'auto_approved'],
    ]);
    // One readable line per event: the prompt, the approval, the queued command, its arrival and its report.
    expect(lines.filter((l) => / prompt \d\/6 /.test(l))).toHaveLength(6);
    expect(lines.filter((l) => l.includes('approved by admin@demo-msp.example'))).toHaveLength(2);
    expect(lines.filter((l) => l.includes('reported actuate_elevation completed (accepted)'))).toHaveLength(2);
    expect(lines[lines.length - 1]).toMatch(/done: 6 prompts \(2 auto_approved, 2 actuating, 1 denied, 1 ignored\)/);
    // The command arrives on the wait the agent held while the technician decided, and the simulator says how long it took.
    expect(lines.filter((l) => /approval to device: \d+ ms \(the command reached the agent \d+ ms after the actuation was committed\)/.test(l))).toHaveLength(2);

    const recorded = results.filter((r) => r.requestId).map((r) => r.requestId!);
    expect(recorded).toHaveLength(5);
    const list = await request(t.http).get(`/api/v1/pam/elevation-requests?orgId=${ids.org}&deviceId=${ids.ws1}&limit=100`).set('Authorization', `Bearer ${admin}`).expect(200);
    for (const id of recorded) expect(list.body.requests.map((r: { id: string }) => r.id)).toContain(id);
    const actuated = results.filter((r) => r.finalStatus === 'actuating');
    for (const r of actuated) {
      const detail = await request(t.http).get(`/api/v1/pam/elevation-requests/${r.requestId}`).set('Authorization', `Bearer ${admin}`).expect(200);
      expect(detail.body.request.status).toBe('actuating');
      expect(detail.body.events.map((e: { type: string }) => e.type)).toEqual(['created', 'approved', 'actuation_claimed', 'actuation_completed']);
    }

    const audit = await ownerQuery<{ action: string; resource_id: string }>(
      `SELECT action, resource_id FROM audit_logs WHERE org_id = $1 AND resource_id = ANY($2::text[]) ORDER BY created_at, action`,
      [ids.org, recorded],
    );
    const actions = (id: string) => audit.filter((a) => a.resource_id === id).map((a) => a.action);
    expect(actions(results[0].requestId!)).toEqual(['pam.elevation.auto_approve']);
    expect(actions(results[2].requestId!)).toEqual(['pam.elevation.auto_deny']);
    for (const r of actuated) expect(actions(r.requestId!)).toEqual(expect.arrayContaining(['pam.elevation.request', 'pam.elevation.approve']));
    const viaApi = await request(t.http).get(`/api/v1/audit-logs?orgId=${ids.org}&resourceId=${actuated[0].requestId}`).set('Authorization', `Bearer ${admin}`).expect(200);
    expect(JSON.stringify(viaApi.body)).toContain('pam.elevation.approve');
  });

  it('refuses a fixture rule the API would refuse, or a request missing who decided it, and writes nothing of that file', async () => {
    const run = Math.random().toString(36).slice(2, 10);
    const base: Fixture = {
      partners: [{ key: 'p', name: `Fixture check ${run}` }],
      organizations: [{ key: 'o', partner: 'p', name: 'Clinic' }],
      sites: [{ key: 's', organization: 'o', name: 'HQ' }],
      devices: [{ key: 'd', organization: 'o', site: 's', hostname: `WS-${run}` }],
    };
    await expect(t.seed({ ...base, pamRules: [{ key: 'r', organization: 'o', name: 'No criteria', verdict: 'auto_approve' }] })).rejects.toThrow(/PAM rule "No criteria": /);
    await expect(
      t.seed({
        ...base,
        elevationRequests: [{ key: 'e', id: '5f0c3c1e-7d1a-4b8e-9c2f-0a1b2c3d4e5f', device: 'd', status: 'approved', requestedHoursAgo: 1, subjectUsername: 'u', path: 'C:\\x.exe', hash: 'a'.repeat(64) }],
      }),
    ).rejects.toThrow(/needs decidedBy/);
    await expect(
      t.seed({ ...base, elevationRequests: [{ key: 'e', id: '5f0c3c1e-7d1a-4b8e-9c2f-0a1b2c3d4e5f', device: 'd', status: 'pending', requestedHoursAgo: 1, subjectUsername: 'u', path: 'C:\\x.exe', hash: 'a'.repeat(63) }] }),
    ).rejects.toThrow(/hash must be 64 hexadecimal characters/);
    expect(await ownerQuery(`SELECT 1 FROM partners WHERE name = $1`, [`Fixture check ${run}`])).toEqual([]);
  });

  it('stops with a clear error when the agent token is not the device\'s', async () => {
    await expect(
      simulate({
        url: t.baseUrl, agentId: agent.agentId!, token: 'not-the-token', count: 1, intervalSeconds: 0, waitSeconds: 1, manual: true,
        technician: { email: '', password: '' }, log: () => undefined,
      }),
    ).rejects.toThrow(/the agent cannot reach .* \(401/);
  });
});
