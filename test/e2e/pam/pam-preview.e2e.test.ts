import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';
import request from 'supertest';
import { expectError, insertRequests, startPamWorld, type PamWorld } from './pam-e2e.kit';

const ZERO = { pending: 0, approved: 0, auto_approved: 0, denied: 0, expired: 0, revoked: 0, actuating: 0 };

describe('PAM rule preview', () => {
  let w: PamWorld;
  let r: Record<string, string>;

  beforeAll(async () => {
    w = await startPamWorld();
    const ids = await insertRequests(w, [
      { status: 'pending', signer: 'Acme Corp', path: 'C:\\Program Files\\Acme\\setup.exe', user: 'alice', hoursAgo: 1 },
      { status: 'approved', siteKey: 'A2', signer: 'ACME CORP', path: 'C:\\Tools\\acme.exe', user: 'bob', hoursAgo: 2 },
      { flowType: 'tech_jit_admin', status: 'denied', signer: 'Contoso', hoursAgo: 3 },
      { flowType: 'ai_tool_action', status: 'auto_approved', toolName: 'run_script', riskTier: 4, hoursAgo: 4 },
      { status: 'expired', signer: 'Acme Corp', hoursAgo: 24 * 40 },
      { status: 'revoked', siteKey: 'A2', path: 'C:\\x.exe', hoursAgo: 5 },
      { status: 'actuating', signer: 'Acme Corp', hoursAgo: 6 },
      { status: 'denied', signer: 'Acme Corp', hoursAgo: 24 * 95 },
    ]);
    r = { pending: ids[0], approved: ids[1], jit: ids[2], tool: ids[3], old: ids[4], noSigner: ids[5], actuating: ids[6] };
  }, 60_000);
  afterAll(() => w.close());

  const preview = (body: object) => w.as.adminA.post('/pam/rules/preview', body);

  it('counts matches over the last 30 days by default, with the full status breakdown and a sample newest first', async () => {
    const res = await preview({ matchSigner: 'acme corp' }).expect(200);
    expect(res.body).toEqual({
      success: true,
      totalMatched: 3,
      totalScanned: 6,
      windowDays: 30,
      truncated: false,
      statusBreakdown: { ...ZERO, pending: 1, approved: 1, actuating: 1 },
      sample: [
        { id: r.pending, requestedAt: expect.any(String), flowType: 'uac_intercept', status: 'pending' },
        { id: r.approved, requestedAt: expect.any(String), flowType: 'uac_intercept', status: 'approved' },
        { id: r.actuating, requestedAt: expect.any(String), flowType: 'uac_intercept', status: 'actuating' },
      ],
    });
    const times = res.body.sample.map((s: { requestedAt: string }) => Date.parse(s.requestedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('scans the window it is given, from 1 to 90 days', async () => {
    const res = await preview({ matchSigner: 'Acme Corp', windowDays: 90 }).expect(200);
    expect(res.body).toMatchObject({ totalMatched: 4, totalScanned: 7, windowDays: 90, statusBreakdown: { ...ZERO, pending: 1, approved: 1, actuating: 1, expired: 1 } });
    expect((await preview({ matchSigner: 'Acme Corp', windowDays: 1 }).expect(200)).body).toMatchObject({ totalMatched: 3, totalScanned: 6, windowDays: 1 });
    for (const windowDays of [0, 91, 1.5, '30']) {
      const bad = await preview({ matchSigner: 'Acme Corp', windowDays });
      expectError(bad, 400, 'validation_failed');
      expect(bad.body.details[0].field).toBe('windowDays');
    }
  });

  it('restricts the scan to one flow type when asked', async () => {
    const res = await preview({ matchSigner: 'acme corp', flowType: 'uac_intercept' }).expect(200);
    expect(res.body).toMatchObject({ totalMatched: 3, totalScanned: 4 });
    expectError(await preview({ matchSigner: 'Contoso', flowType: 'uac' }), 400, 'validation_failed');
  });

  it('matches no JIT request, since no rule governs that flow type', async () => {
    const res = await preview({ matchSigner: 'Contoso', flowType: 'tech_jit_admin' }).expect(200);
    expect(res.body).toMatchObject({ totalMatched: 0, totalScanned: 1, sample: [] });
  });

  it('never turns missing data into a match when a criterion is negated', async () => {
    // The one request with another signer is the JIT request (no rule governs it); the unsigned one lacks the value.
    const signer = await preview({ matchSigner: 'Acme Corp', matchNegate: ['signer'] }).expect(200);
    expect(signer.body.totalMatched).toBe(0);
    const user = await preview({ matchUser: 'alice', matchNegate: ['user'] }).expect(200);
    expect(user.body.sample.map((s: { id: string }) => s.id)).toEqual([r.approved]);
    expect(user.body.totalMatched).toBe(1);
  });

  it('matches path globs, users, tool names and sites as the engine does', async () => {
    expect((await preview({ matchPathGlob: 'c:/PROGRAM FILES/**/*.EXE' }).expect(200)).body.sample.map((s: { id: string }) => s.id)).toEqual([r.pending]);
    expect((await preview({ matchUser: 'BOB' }).expect(200)).body.sample.map((s: { id: string }) => s.id)).toEqual([r.approved]);
    expect((await preview({ matchToolName: 'run_script', matchRiskTier: 4 }).expect(200)).body).toMatchObject({ totalMatched: 1, statusBreakdown: { ...ZERO, auto_approved: 1 } });
    expect((await preview({ matchSigner: 'acme corp', siteId: w.ids.siteA2 }).expect(200)).body.sample.map((s: { id: string }) => s.id)).toEqual([r.approved]);
  });

  it('reports zero matches for a draft on a directory group, since requests keep no groups', async () => {
    const res = await preview({ matchAdGroup: 'Domain Admins' }).expect(200);
    expect(res.body).toMatchObject({ totalMatched: 0, totalScanned: 6, sample: [], statusBreakdown: ZERO });
  });

  it('resolves a signer group draft against the group members', async () => {
    const { body } = await w.as.adminA.post('/pam/signer-groups', { name: 'Preview group', signers: ['acme corp', 'Fabrikam'] }).expect(201);
    const res = await preview({ matchSignerGroupId: body.signerGroup.id }).expect(200);
    expect(res.body.totalMatched).toBe(3);
    const { body: other } = await w.as.adminB.post('/pam/signer-groups', { name: 'Other org group', signers: ['Acme Corp'] }).expect(201);
    expectError(await preview({ matchSignerGroupId: other.signerGroup.id }), 400, 'validation_failed');
  });

  it('checks the draft like a rule being saved', async () => {
    expectError(await preview({}), 400, 'invalid_rule_shape');
    expectError(await preview({ timeWindow: { start: '09:00', end: '17:00' } }), 400, 'invalid_rule_shape');
    expectError(await preview({ matchSigner: 'Acme', matchToolName: 'read_file' }), 400, 'invalid_rule_shape');
    const tier = await preview({ matchToolName: 'read_file', matchRiskTier: 4 });
    expectError(tier, 400, 'pam_rule_risk_tier_unreachable');
    expect(tier.body.validTiers).toEqual([0]);
    expectError(await preview({ matchSigner: 'Acme', siteId: w.ids.siteB1 }), 400, 'validation_failed');
    expectError(await preview({ matchSigner: 'Acme', name: 'a saved rule' }), 400, 'validation_failed');
  });

  it('needs devices:write but not MFA', async () => {
    await w.as.adminANoMfa.post('/pam/rules/preview', { matchSigner: 'Acme Corp' }).expect(200);
    const res = await w.as.readerA.post('/pam/rules/preview', { matchSigner: 'Acme Corp' });
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('devices:write');
  });

  it('scans only the sites of a site-restricted caller and refuses a draft on another site', async () => {
    const res = await w.as.siteA1.post('/pam/rules/preview', { matchSigner: 'Acme Corp' }).expect(200);
    expect(res.body).toMatchObject({ totalScanned: 4, totalMatched: 2 });
    expect(res.body.sample.map((s: { id: string }) => s.id)).toEqual([r.pending, r.actuating]);
    expectError(await w.as.siteA1.post('/pam/rules/preview', { matchSigner: 'Acme Corp', siteId: w.ids.siteA2 }), 403, 'site_access_denied');
  });

  it('keeps tenants apart: own history only, 404 for another organization', async () => {
    const res = await w.as.adminB.post('/pam/rules/preview', { matchSigner: 'Acme Corp' }).expect(200);
    expect(res.body.sample.map((s: { id: string }) => s.id)).not.toContain(r.pending);
    expectError(await preview({ orgId: w.ids.orgB, matchSigner: 'Acme Corp' }), 404, 'not_found');
    expectError(await w.as.tech.post('/pam/rules/preview', { matchSigner: 'Acme Corp' }), 400, 'validation_failed');
    const tech = await w.as.tech.post('/pam/rules/preview', { orgId: w.ids.orgA, matchSigner: 'Acme Corp' }).expect(200);
    expect(tech.body.totalMatched).toBe(3);
  });
});

describe('PAM rule preview past the scan limit', () => {
  let w: PamWorld;
  let limited: TestApp;
  let ids: string[];

  beforeAll(async () => {
    w = await startPamWorld();
    limited = await startTestApp({ PAM_PREVIEW_SCAN_LIMIT: '4' });
    // Organization B: five requests in one hour two hours ago (the oldest of them a JIT request), and two older ones.
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000);
    const at = (minutes: number) => new Date(hour.getTime() + minutes * 60_000);
    ids = await insertRequests(
      w,
      [
        { status: 'pending', signer: 'Acme', at: at(50) },
        { status: 'approved', signer: 'Other', at: at(40) },
        { status: 'denied', signer: 'Acme', at: at(30) },
        { status: 'expired', signer: 'Acme', at: at(20) },
        { status: 'revoked', signer: 'Acme', flowType: 'tech_jit_admin', at: at(10) },
        { status: 'pending', signer: 'Acme', hoursAgo: 30 },
        { status: 'pending', signer: 'Acme', hoursAgo: 60 },
      ],
      'B',
    );
  }, 60_000);
  afterAll(async () => {
    await limited.close();
    await w.close();
  });

  const previewLimited = async (body: object) =>
    request(limited.http)
      .post('/api/v1/pam/rules/preview')
      .set('Authorization', `Bearer ${await limited.token(w.ids.adminB, { mfa: true })}`)
      .send(body);

  it('scans only the newest requests up to the limit, cutting inside an hour exactly, and says so', async () => {
    const res = await previewLimited({ matchSigner: 'acme' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      totalScanned: 4,
      totalMatched: 3,
      truncated: true,
      statusBreakdown: { ...ZERO, pending: 1, denied: 1, expired: 1 },
    });
    expect(res.body.sample.map((s: { id: string }) => s.id)).toEqual([ids[0], ids[2], ids[3]]);
  });

  it('is not truncated when the window holds exactly the limit, or fewer', async () => {
    const res = await previewLimited({ matchSigner: 'acme', windowDays: 1, flowType: 'uac_intercept' });
    expect(res.body).toMatchObject({ totalScanned: 4, totalMatched: 3, truncated: false });
    const all = await w.as.adminB.post('/pam/rules/preview', { matchSigner: 'acme', windowDays: 3 }).expect(200);
    // Six requests name the signer; the JIT one is not matched, since no rule governs that flow type.
    expect(all.body).toMatchObject({ totalScanned: 7, totalMatched: 5, truncated: false });
  });

  it('samples at most twenty matches, newest first', async () => {
    await insertRequests(w, Array.from({ length: 25 }, (_, i) => ({ status: 'pending', signer: 'Bulk', hoursAgo: 70 + i * 0.25 })), 'B');
    const res = await w.as.adminB.post('/pam/rules/preview', { matchSigner: 'bulk', windowDays: 30 }).expect(200);
    expect(res.body.totalMatched).toBe(25);
    expect(res.body.sample).toHaveLength(20);
    const times = res.body.sample.map((s: { requestedAt: string }) => Date.parse(s.requestedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const [newest] = await ownerQuery<{ id: string }>(`SELECT id FROM elevation_requests WHERE org_id = $1 AND target_executable_signer = 'Bulk' ORDER BY requested_at DESC LIMIT 1`, [w.ids.orgB]);
    expect(res.body.sample[0].id).toBe(newest.id);
  });
});
