import request from 'supertest';
import { ownerQuery } from '../../support/test-app';
import { bearer, list, PamWorld, respond, seedRequest, startPamWorld } from './pam-lifecycle.kit';

describe('elevation request list and active list (GET /pam/elevation-requests, GET /pam/active)', () => {
  let w: PamWorld;
  const r: Record<string, string> = {};

  beforeAll(async () => {
    w = await startPamWorld();
    r.pendingA1 = await seedRequest(w, { device: 'deviceA1', ageMinutes: 1 });
    r.stalePendingA1 = await seedRequest(w, { device: 'deviceA1', ageMinutes: 20 });
    r.autoA1 = await seedRequest(w, { device: 'deviceA1', status: 'auto_approved', decisionSource: 'pam_rule', pamRuleName: 'Trusted installers', ageMinutes: 2 });
    r.deniedPolicyA2 = await seedRequest(w, { device: 'deviceA2', status: 'denied', decisionSource: 'software_policy', matchedPolicyName: 'Blocked tools', ageMinutes: 3 });
    r.orgDefaultDeniedA2 = await seedRequest(w, { device: 'deviceA2', status: 'denied', decisionSource: 'org_default', ageMinutes: 4 });
    r.actuatingA2 = await seedRequest(w, { device: 'deviceA2', status: 'actuating', decisionSource: 'pam_rule', ageMinutes: 5 });
    r.endedWindowA1 = await seedRequest(w, { device: 'deviceA1', status: 'approved', expiresInMinutes: -1, ageMinutes: 30 });
    r.toolA1 = await seedRequest(w, { device: 'deviceA1', flowType: 'ai_tool_action', toolName: 'kill_process', riskTier: 2, actionDigest: 'a'.repeat(64), subjectUsername: 'Admin A', ageMinutes: 6 });
    r.pendingB1 = await seedRequest(w, { device: 'deviceB1', ageMinutes: 1 });
    r.humanA1 = await seedRequest(w, { device: 'deviceA1', ageMinutes: 7 });
    await respond(w, w.mfa.tech, r.humanA1, { decision: 'approve', durationMinutes: 30 }).expect(200);
  });
  afterAll(() => w.t.close());

  it('lists the organization\'s requests newest first with the derived fields of spec P2.1', async () => {
    const res = await list(w, w.plain.readerA).expect(200);
    expect(res.body.success).toBe(true);
    const ids = res.body.requests.map((x: { id: string }) => x.id);
    expect(ids).toEqual([r.pendingA1, r.autoA1, r.deniedPolicyA2, r.orgDefaultDeniedA2, r.actuatingA2, r.toolA1, r.humanA1, r.stalePendingA1, r.endedWindowA1]);
    expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: 9 });
    const byId = Object.fromEntries(res.body.requests.map((x: { id: string }) => [x.id, x]));
    expect(byId[r.pendingA1]).toEqual({
      id: r.pendingA1,
      orgId: w.ids.orgA,
      siteId: w.ids.siteA1,
      deviceId: w.ids.deviceA1,
      deviceHostname: w.f.devices![0].hostname,
      siteName: 'A1',
      flowType: 'uac_intercept',
      status: 'pending',
      subjectUsername: 'CORP\\alice',
      targetExecutablePath: 'C:\\Program Files\\Tool\\setup.exe',
      targetExecutableSigner: 'Tool Vendor Ltd',
      requestedAt: expect.any(String),
      approvedByName: null,
      deniedByName: null,
      revokedByName: null,
      matchedPolicyName: null,
      pamRuleId: null,
      pamRuleName: null,
      decisionSource: null,
      expiresAt: null,
    });
    expect(byId[r.autoA1]).toMatchObject({ status: 'auto_approved', decisionSource: 'pam_rule', pamRuleName: 'Trusted installers', expiresAt: expect.any(String) });
    expect(byId[r.deniedPolicyA2]).toMatchObject({ status: 'denied', decisionSource: 'software_policy', matchedPolicyName: 'Blocked tools', siteName: 'A2' });
    expect(byId[r.orgDefaultDeniedA2]).toMatchObject({ status: 'denied', decisionSource: null });
    expect(byId[r.humanA1]).toMatchObject({ status: 'approved', decisionSource: 'human', approvedByName: 'Tech' });
    expect(byId[r.toolA1]).toMatchObject({ flowType: 'ai_tool_action', toolName: 'kill_process', riskTier: 2, actionDigest: 'a'.repeat(64) });
    expect(byId[r.pendingA1]).not.toHaveProperty('toolName');
  });

  it('shows a pending request past its TTL and an approval past its window as expired before any sweep', async () => {
    const res = await list(w, w.plain.adminA).expect(200);
    const byId = Object.fromEntries(res.body.requests.map((x: { id: string; status: string }) => [x.id, x.status]));
    expect(byId[r.stalePendingA1]).toBe('expired');
    expect(byId[r.endedWindowA1]).toBe('expired');
    const [stored] = await ownerQuery<{ status: string }>('SELECT status FROM elevation_requests WHERE id = $1', [r.stalePendingA1]);
    expect(stored.status).toBe('pending');
  });

  it('filters by status using the effective status', async () => {
    const pending = await list(w, w.plain.adminA, { status: 'pending' }).expect(200);
    expect(pending.body.requests.map((x: { id: string }) => x.id)).toEqual([r.pendingA1, r.toolA1]);
    const expired = await list(w, w.plain.adminA, { status: 'expired' }).expect(200);
    expect(expired.body.requests.map((x: { id: string }) => x.id).sort()).toEqual([r.stalePendingA1, r.endedWindowA1].sort());
    const approved = await list(w, w.plain.adminA, { status: 'approved' }).expect(200);
    expect(approved.body.requests.map((x: { id: string }) => x.id)).toEqual([r.humanA1]);
    const denied = await list(w, w.plain.adminA, { status: 'denied' }).expect(200);
    expect(denied.body.pagination.total).toBe(2);
  });

  it('filters by flow type, device, site and request-time range', async () => {
    const tools = await list(w, w.plain.adminA, { flowType: 'ai_tool_action' }).expect(200);
    expect(tools.body.requests.map((x: { id: string }) => x.id)).toEqual([r.toolA1]);
    const device = await list(w, w.plain.adminA, { deviceId: w.ids.deviceA2 }).expect(200);
    expect(device.body.requests.map((x: { id: string }) => x.id)).toEqual([r.deniedPolicyA2, r.orgDefaultDeniedA2, r.actuatingA2]);
    const site = await list(w, w.plain.adminA, { siteId: w.ids.siteA2 }).expect(200);
    expect(site.body.pagination.total).toBe(3);
    const now = Date.now();
    const window = await list(w, w.plain.adminA, { from: new Date(now - 4.5 * 60_000).toISOString(), to: new Date(now - 1.5 * 60_000).toISOString() }).expect(200);
    expect(window.body.requests.map((x: { id: string }) => x.id)).toEqual([r.autoA1, r.deniedPolicyA2, r.orgDefaultDeniedA2]);
  });

  it('pages with limit up to 100 and rejects 101, 0 and a reversed time range', async () => {
    const page2 = await list(w, w.plain.adminA, { limit: 2, page: 2 }).expect(200);
    expect(page2.body.requests.map((x: { id: string }) => x.id)).toEqual([r.deniedPolicyA2, r.orgDefaultDeniedA2]);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 2, total: 9 });
    const past = await list(w, w.plain.adminA, { limit: 50, page: 3 }).expect(200);
    expect(past.body).toMatchObject({ requests: [], pagination: { page: 3, limit: 50, total: 9 } });
    const none = await list(w, w.plain.adminA, { deviceId: w.ids.deviceB1 }).expect(200);
    expect(none.body).toMatchObject({ requests: [], pagination: { total: 0 } });
    await list(w, w.plain.adminA, { limit: 100 }).expect(200);
    const over = await list(w, w.plain.adminA, { limit: 101 }).expect(400);
    expect(over.body).toMatchObject({ code: 'validation_failed', details: [expect.objectContaining({ field: 'limit' })] });
    await list(w, w.plain.adminA, { limit: 0 }).expect(400);
    const reversed = await list(w, w.plain.adminA, { from: '2025-02-01T00:00:00Z', to: '2025-01-01T00:00:00Z' }).expect(400);
    expect(reversed.body.code).toBe('validation_failed');
  });

  it('rejects unknown filters, bad enums, bad ids and bad timestamps with 400', async () => {
    const bad: Record<string, string>[] = [{ status: 'approvedish' }, { flowType: 'x' }, { deviceId: 'not-a-uuid' }, { from: 'yesterday' }, { colour: 'red' }];
    for (const q of bad) {
      const res = await list(w, w.plain.adminA, q).expect(400);
      expect(res.body.code).toBe('validation_failed');
    }
  });

  it('shows a site-restricted member only the requests of their sites and refuses a siteId outside them', async () => {
    const res = await list(w, w.plain.siteA1User).expect(200);
    const sites = new Set(res.body.requests.map((x: { siteId: string }) => x.siteId));
    expect([...sites]).toEqual([w.ids.siteA1]);
    expect(res.body.pagination.total).toBe(6);
    const denied = await list(w, w.plain.siteA1User, { siteId: w.ids.siteA2 }).expect(403);
    expect(denied.body.code).toBe('site_access_denied');
  });

  it('never shows another organization\'s requests, and lets a partner technician narrow to one organization', async () => {
    const b = await list(w, w.plain.adminB).expect(200);
    expect(b.body.requests.map((x: { id: string }) => x.id)).toEqual([r.pendingB1]);
    const techB = await list(w, w.plain.tech, { orgId: w.ids.orgB }).expect(200);
    expect(techB.body.requests.map((x: { id: string }) => x.id)).toEqual([r.pendingB1]);
    const techA = await list(w, w.plain.techA, { orgId: w.ids.orgB }).expect(404);
    expect(techA.body.code).toBe('not_found');
  });

  it('needs devices:read', async () => {
    const [{ id: roleId }] = await ownerQuery<{ id: string }>(
      `INSERT INTO roles (scope, org_id, name, permissions) VALUES ('organization', $1, 'No devices', '{organizations:read}') RETURNING id`,
      [w.ids.orgA],
    );
    await ownerQuery('UPDATE organization_memberships SET role_id = $1 WHERE user_id = $2', [roleId, w.ids.readerA]);
    try {
      const res = await list(w, w.plain.readerA).expect(403);
      expect(res.body).toMatchObject({ code: 'forbidden', permission: 'devices:read' });
    } finally {
      await ownerQuery(`UPDATE organization_memberships m SET role_id = r.id FROM roles r WHERE m.user_id = $1 AND r.org_id = $2 AND r.name = 'Reader'`, [w.ids.readerA, w.ids.orgA]);
    }
  });

  it('lists active elevations only: in force, window not ended, within the caller\'s sites', async () => {
    const res = await request(w.t.baseUrl).get('/api/v1/pam/active').set(bearer(w.plain.adminA)).expect(200);
    expect(res.body.success).toBe(true);
    expect(res.body.active.map((x: { id: string }) => x.id).sort()).toEqual([r.autoA1, r.actuatingA2, r.humanA1].sort());
    for (const a of res.body.active) expect(new Date(a.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const site = await request(w.t.baseUrl).get('/api/v1/pam/active').set(bearer(w.plain.siteA1User)).expect(200);
    expect(site.body.active.map((x: { id: string }) => x.id).sort()).toEqual([r.autoA1, r.humanA1].sort());
  });

  it('returns one request with its transition log, and 404 for another tenant\'s request', async () => {
    const res = await request(w.t.baseUrl).get(`/api/v1/pam/elevation-requests/${r.humanA1}`).set(bearer(w.plain.adminA)).expect(200);
    expect(res.body.request).toMatchObject({ id: r.humanA1, status: 'approved', approvedByName: 'Tech' });
    expect(res.body.events).toEqual([
      expect.objectContaining({ type: 'approved', fromStatus: 'pending', toStatus: 'approved', actorType: 'user', details: expect.objectContaining({ via: 'console', durationMinutes: 30 }) }),
    ]);
    await request(w.t.baseUrl).get(`/api/v1/pam/elevation-requests/${r.pendingB1}`).set(bearer(w.plain.adminA)).expect(404);
    await request(w.t.baseUrl).get(`/api/v1/pam/elevation-requests/${r.deniedPolicyA2}`).set(bearer(w.plain.siteA1User)).expect(404);
  });
});

describe('active list cap', () => {
  let w: PamWorld;
  beforeAll(async () => {
    w = await startPamWorld();
  });
  afterAll(() => w.t.close());

  it('returns at most 500 active elevations, soonest to end first', async () => {
    await ownerQuery(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, requested_at, expires_at)
       SELECT $1, $2, $3, 'uac_intercept', 'auto_approved', now(), now() + make_interval(mins => g) FROM generate_series(1, 501) g`,
      [w.ids.orgA, w.ids.siteA1, w.ids.deviceA1],
    );
    const res = await request(w.t.baseUrl).get('/api/v1/pam/active').set(bearer(w.plain.adminA)).expect(200);
    expect(res.body.active).toHaveLength(500);
    const ends = res.body.active.map((x: { expiresAt: string }) => Date.parse(x.expiresAt));
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
  });
});
