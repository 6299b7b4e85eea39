import { ownerQuery } from '../../support/test-app';
import { expectError, startPamWorld, type PamWorld } from './pam-e2e.kit';

describe('PAM organization config API', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
  }, 60_000);
  afterAll(() => w.close());

  it('answers require_approval and 15 minutes for an organization that never saved a config, without storing a row', async () => {
    const res = await w.as.readerA.get('/pam/config').expect(200);
    expect(res.body).toEqual({ success: true, config: { orgId: w.ids.orgA, defaultUnmatchedVerdict: 'require_approval', defaultApprovalDurationMinutes: 15 } });
    expect(await ownerQuery(`SELECT 1 FROM pam_org_config WHERE org_id = $1`, [w.ids.orgA])).toEqual([]);
  });

  it('upserts one row per organization, keeps the duration when absent, and audits each change', async () => {
    const first = await w.as.adminA.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny' }).expect(200);
    expect(first.body.config).toEqual({ orgId: w.ids.orgA, defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 15 });
    await w.as.adminA.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 60 }).expect(200);
    const third = await w.as.adminA.put('/pam/config', { defaultUnmatchedVerdict: 'require_approval' }).expect(200);
    expect(third.body.config).toEqual({ orgId: w.ids.orgA, defaultUnmatchedVerdict: 'require_approval', defaultApprovalDurationMinutes: 60 });
    expect((await w.as.readerA.get('/pam/config').expect(200)).body.config.defaultUnmatchedVerdict).toBe('require_approval');
    expect(await ownerQuery(`SELECT default_unmatched_verdict FROM pam_org_config WHERE org_id = $1`, [w.ids.orgA])).toEqual([{ default_unmatched_verdict: 'require_approval' }]);
    expect(await ownerQuery(`SELECT 1 FROM audit_logs WHERE org_id = $1 AND action = 'pam_config.update'`, [w.ids.orgA])).toHaveLength(3);
  });

  it('validates the verdict and the duration (1 to 1440)', async () => {
    for (const bad of [{}, { defaultUnmatchedVerdict: 'auto_approve' }, { defaultUnmatchedVerdict: 'ignore' }, { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 0 }, { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 1441 }, { defaultUnmatchedVerdict: 'auto_deny', extra: 1 }]) {
      expectError(await w.as.adminA.put('/pam/config', bad), 400, 'validation_failed');
    }
    await w.as.adminA.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 1 }).expect(200);
    await w.as.adminA.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 1440 }).expect(200);
  });

  it('requires devices:write with MFA to write and devices:read to read', async () => {
    const res = await w.as.readerA.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny' });
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('devices:write');
    expectError(await w.as.adminANoMfa.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny' }), 403, 'mfa_required');
    await w.as.adminANoMfa.get('/pam/config').expect(200);
  });

  it('refuses a site-restricted caller, since the default reaches every site', async () => {
    await w.as.siteA1.get('/pam/config').expect(200);
    expectError(await w.as.siteA1.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny' }), 403, 'site_access_denied');
  });

  it('keeps organizations apart: own organization by default, 404 for another, orgId required for partner technicians', async () => {
    await w.as.adminB.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny' }).expect(200);
    expect((await w.as.adminB.get('/pam/config').expect(200)).body.config.orgId).toBe(w.ids.orgB);
    expectError(await w.as.adminA.get(`/pam/config?orgId=${w.ids.orgB}`), 404, 'not_found');
    expectError(await w.as.adminA.put('/pam/config', { orgId: w.ids.orgB, defaultUnmatchedVerdict: 'require_approval' }), 404, 'not_found');
    expect(await ownerQuery(`SELECT default_unmatched_verdict FROM pam_org_config WHERE org_id = $1`, [w.ids.orgB])).toEqual([{ default_unmatched_verdict: 'auto_deny' }]);
    expectError(await w.as.tech.get('/pam/config'), 400, 'validation_failed');
    expect((await w.as.tech.get(`/pam/config?orgId=${w.ids.orgB}`).expect(200)).body.config.defaultUnmatchedVerdict).toBe('auto_deny');
    expectError(await w.as.techA.get(`/pam/config?orgId=${w.ids.orgB}`), 404, 'not_found');
  });
});
