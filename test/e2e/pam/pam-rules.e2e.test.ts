import { ownerQuery } from '../../support/test-app';
import { expectError, rulesVersion, startPamWorld, type PamWorld } from './pam-e2e.kit';

const HASH = 'AB'.repeat(32);

describe('PAM rules API', () => {
  let w: PamWorld;
  let n = 0;
  const body = (overrides: Record<string, unknown> = {}) => ({ name: `rule ${++n}`, verdict: 'auto_approve', matchSigner: 'Acme Corp', ...overrides });

  beforeAll(async () => {
    w = await startPamWorld();
  }, 60_000);
  afterAll(() => w.close());

  describe('create', () => {
    it('creates a rule with the defaults of spec P2.2, audits it and bumps the rules version', async () => {
      const before = await rulesVersion(w.ids.orgA);
      const res = await w.as.adminA.post('/pam/rules', { name: 'Signed by Acme', verdict: 'auto_approve', matchSigner: 'Acme Corp' }).expect(201);
      expect(res.body).toEqual({ success: true, rule: expect.objectContaining({ id: expect.any(String), orgId: w.ids.orgA, name: 'Signed by Acme' }) });
      expect(res.body.rule).toMatchObject({
        priority: 100,
        enabled: true,
        siteId: null,
        approvalDurationMinutes: null,
        timeWindow: null,
        matchNegate: null,
        matchRiskTierStale: false,
        matchRiskTierValidTiers: null,
        createdBy: w.ids.adminA,
      });
      expect(await rulesVersion(w.ids.orgA)).toBe(before + 1);
      const [audit] = await ownerQuery<{ action: string; org_id: string }>(`SELECT action, org_id FROM audit_logs WHERE resource_id = $1`, [res.body.rule.id]);
      expect(audit).toEqual({ action: 'pam_rule.create', org_id: w.ids.orgA });
    });

    it('stores every field of spec P2.2, trimmed, with the hash in lower case and the window zone explicit', async () => {
      const res = await w.as.adminA
        .post('/pam/rules', {
          name: '  Installers at night  ',
          verdict: 'require_approval',
          priority: 7,
          enabled: false,
          siteId: w.ids.siteA1,
          matchHash: HASH,
          matchPathGlob: ' C:\\Installers\\**\\*.msi ',
          matchParentImage: 'C:\\Windows\\explorer.exe',
          matchCommandLine: '/quiet',
          matchUser: 'CORP\\alice',
          matchAdGroup: 'Installers',
          matchNegate: ['commandLine'],
          timeWindow: { start: '22:00', end: '06:00', days: [5, 1, 5] },
          approvalDurationMinutes: 60,
        })
        .expect(201);
      expect(res.body.rule).toMatchObject({
        name: 'Installers at night',
        priority: 7,
        enabled: false,
        siteId: w.ids.siteA1,
        matchHash: 'ab'.repeat(32),
        matchPathGlob: 'C:\\Installers\\**\\*.msi',
        matchParentImage: 'C:\\Windows\\explorer.exe',
        matchCommandLine: '/quiet',
        matchUser: 'CORP\\alice',
        matchAdGroup: 'Installers',
        matchSigner: null,
        matchNegate: ['commandLine'],
        timeWindow: { start: '22:00', end: '06:00', days: [1, 5], timezone: 'UTC' },
        approvalDurationMinutes: 60,
      });
      const [stored] = await ownerQuery<{ match_hash: string; time_window: unknown }>(`SELECT match_hash, time_window FROM pam_rules WHERE id = $1`, [res.body.rule.id]);
      expect(stored).toEqual({ match_hash: 'ab'.repeat(32), time_window: { start: '22:00', end: '06:00', days: [1, 5], timezone: 'UTC' } });
    });

    it('accepts a 255-character name and rejects 256 characters, an empty or a blank name', async () => {
      await w.as.adminA.post('/pam/rules', body({ name: 'n'.repeat(255) })).expect(201);
      for (const name of ['n'.repeat(256), '', '   ']) {
        const res = await w.as.adminA.post('/pam/rules', body({ name }));
        expectError(res, 400, 'validation_failed');
        expect(res.body.details).toEqual([expect.objectContaining({ field: 'name' })]);
      }
    });

    it('accepts approvalDurationMinutes from 1 to 1440 and rejects 0 and 1441', async () => {
      await w.as.adminA.post('/pam/rules', body({ approvalDurationMinutes: 1 })).expect(201);
      await w.as.adminA.post('/pam/rules', body({ approvalDurationMinutes: 1440 })).expect(201);
      for (const approvalDurationMinutes of [0, 1441, 1.5]) {
        const res = await w.as.adminA.post('/pam/rules', body({ approvalDurationMinutes }));
        expectError(res, 400, 'validation_failed');
        expect(res.body.details[0].field).toBe('approvalDurationMinutes');
      }
    });

    it('bounds criteria lengths, tiers, hashes, priorities and verdicts with validation_failed', async () => {
      await w.as.adminA.post('/pam/rules', body({ matchSigner: 's'.repeat(255) })).expect(201);
      await w.as.adminA.post('/pam/rules', body({ matchSigner: null, matchPathGlob: `C:\\${'p'.repeat(1021)}` })).expect(201);
      const bad: [Record<string, unknown>, string][] = [
        [{ matchSigner: 's'.repeat(256) }, 'matchSigner'],
        [{ matchSigner: null, matchPathGlob: `C:\\${'p'.repeat(1022)}` }, 'matchPathGlob'],
        [{ matchSigner: null, matchToolName: 'read_file', matchRiskTier: 5 }, 'matchRiskTier'],
        [{ matchSigner: null, matchToolName: 'read_file', matchRiskTier: -1 }, 'matchRiskTier'],
        [{ matchHash: 'xyz' }, 'matchHash'],
        [{ matchHash: 'a'.repeat(63) }, 'matchHash'],
        [{ priority: 1.5 }, 'priority'],
        [{ priority: 1_000_001 }, 'priority'],
        [{ verdict: 'allow' }, 'verdict'],
        [{ enabled: 'yes' }, 'enabled'],
        [{ siteId: 'not-a-uuid' }, 'siteId'],
        [{ matchNegate: ['signer', 'everything'] }, 'matchNegate'],
      ];
      for (const [overrides, field] of bad) {
        const res = await w.as.adminA.post('/pam/rules', body(overrides));
        expectError(res, 400, 'validation_failed');
        expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
      }
    });

    it('validates time windows: HH:MM from 00:00 to 23:59, days 0 to 6, UTC or an Area/Location zone', async () => {
      await w.as.adminA.post('/pam/rules', body({ timeWindow: { start: '00:00', end: '23:59', days: [0, 6], timezone: 'America/Argentina/Salta' } })).expect(201);
      const bad = [
        { start: '24:00', end: '06:00' },
        { start: '9:00', end: '17:00' },
        { start: '09:00' },
        { start: '09:00', end: '17:00', days: [7] },
        { start: '09:00', end: '17:00', days: [] },
        { start: '09:00', end: '17:00', timezone: 'Mars/Olympus_Mons' },
        { start: '09:00', end: '17:00', timezone: 'CET' },
        { start: '09:00', end: '17:00', timezone: '+05:30' },
        { start: '09:00', end: '17:00', extra: true },
      ];
      for (const timeWindow of bad) {
        const res = await w.as.adminA.post('/pam/rules', body({ timeWindow }));
        expectError(res, 400, 'validation_failed');
        expect(res.body.details[0].field).toMatch(/^timeWindow/);
      }
    });

    it('rejects unknown properties and malformed JSON in the contract shape', async () => {
      expectError(await w.as.adminA.post('/pam/rules', body({ matchEverything: true })), 400, 'validation_failed');
    });
  });

  describe('shape rules of spec P4.2 and their error codes', () => {
    it.each([
      ['a rule without any criterion', { matchSigner: null }],
      ['a rule with only a time window', { matchSigner: null, timeWindow: { start: '09:00', end: '17:00' } }],
      ['an executable criterion mixed with a tool criterion', { matchToolName: 'read_file' }],
      ['a signer with a signer group', { matchSignerGroupId: '00000000-0000-4000-8000-000000000001' }],
      ['a negated criterion that is not set', { matchNegate: ['user'] }],
      ['verdict ignore on a tool-action rule', { matchSigner: null, matchToolName: 'read_file', verdict: 'ignore' }],
    ])('refuses %s with 400 invalid_rule_shape', async (_label, overrides) => {
      expectError(await w.as.adminA.post('/pam/rules', body(overrides)), 400, 'invalid_rule_shape');
    });

    it('accepts verdict ignore on an executable rule', async () => {
      await w.as.adminA.post('/pam/rules', body({ verdict: 'ignore' })).expect(201);
    });

    it('refuses a tier the tool cannot resolve to with pam_rule_risk_tier_unreachable and the valid tiers', async () => {
      const res = await w.as.adminA.post('/pam/rules', body({ matchSigner: null, matchToolName: 'run_script', matchRiskTier: 1 }));
      expectError(res, 400, 'pam_rule_risk_tier_unreachable');
      expect(res.body.validTiers).toEqual([3, 4]);
    });

    it('accepts any tier for a tool the API does not recognize, a reachable tier, a negated tier and a tier alone', async () => {
      for (const overrides of [
        { matchToolName: 'tool_from_next_year', matchRiskTier: 2 },
        { matchToolName: 'read_file', matchRiskTier: 0 },
        { matchToolName: 'read_file', matchRiskTier: 4, matchNegate: ['riskTier'] },
        { matchRiskTier: 3 },
      ]) {
        const res = await w.as.adminA.post('/pam/rules', body({ matchSigner: null, ...overrides })).expect(201);
        expect(res.body.rule.matchRiskTierStale).toBe(false);
      }
    });

    it('applies the shape rules to the merged result of an update', async () => {
      const { body: created } = await w.as.adminA.post('/pam/rules', body()).expect(201);
      const id = created.rule.id;
      expectError(await w.as.adminA.patch(`/pam/rules/${id}`, { matchToolName: 'read_file' }), 400, 'invalid_rule_shape');
      expectError(await w.as.adminA.patch(`/pam/rules/${id}`, { matchSigner: null }), 400, 'invalid_rule_shape');
      expectError(await w.as.adminA.patch(`/pam/rules/${id}`, { matchNegate: ['hash'] }), 400, 'invalid_rule_shape');
      const tool = await w.as.adminA.patch(`/pam/rules/${id}`, { matchSigner: null, matchToolName: 'read_file' }).expect(200);
      expect(tool.body.rule).toMatchObject({ matchSigner: null, matchToolName: 'read_file' });
      expectError(await w.as.adminA.patch(`/pam/rules/${id}`, { verdict: 'ignore' }), 400, 'invalid_rule_shape');
      const tier = await w.as.adminA.patch(`/pam/rules/${id}`, { matchRiskTier: 3 });
      expectError(tier, 400, 'pam_rule_risk_tier_unreachable');
      expect(tier.body.validTiers).toEqual([0]);
      const [stored] = await ownerQuery<{ match_tool_name: string; match_risk_tier: number | null; verdict: string }>(
        `SELECT match_tool_name, match_risk_tier, verdict FROM pam_rules WHERE id = $1`,
        [id],
      );
      expect(stored).toEqual({ match_tool_name: 'read_file', match_risk_tier: null, verdict: 'auto_approve' });
    });
  });

  describe('update and delete', () => {
    it('updates only the given fields, clears fields set to null, audits and bumps the version', async () => {
      const { body: created } = await w.as.adminA.post('/pam/rules', body({ matchUser: 'bob', priority: 5 })).expect(201);
      const id = created.rule.id;
      const before = await rulesVersion(w.ids.orgA);
      const res = await w.as.adminA.patch(`/pam/rules/${id}`, { name: 'renamed', matchUser: null, approvalDurationMinutes: 30 }).expect(200);
      expect(res.body).toEqual({ success: true, rule: expect.objectContaining({ id, name: 'renamed', matchUser: null, matchSigner: 'Acme Corp', priority: 5, approvalDurationMinutes: 30 }) });
      expect(await rulesVersion(w.ids.orgA)).toBe(before + 1);
      const audits = await ownerQuery<{ action: string; details: { changed: string[] } }>(
        `SELECT action, details FROM audit_logs WHERE resource_id = $1 AND action = 'pam_rule.update'`,
        [id],
      );
      expect(audits).toEqual([{ action: 'pam_rule.update', details: expect.objectContaining({ changed: ['name', 'matchUser', 'approvalDurationMinutes'] }) }]);
    });

    it('refuses null for the fields a rule always has', async () => {
      const { body: created } = await w.as.adminA.post('/pam/rules', body()).expect(201);
      for (const field of ['name', 'verdict', 'priority', 'enabled']) {
        const res = await w.as.adminA.patch(`/pam/rules/${created.rule.id}`, { [field]: null });
        expectError(res, 400, 'validation_failed');
        expect(res.body.details[0].field).toBe(field);
      }
    });

    it('deletes a rule, audits it, bumps the version, and answers 404 afterwards', async () => {
      const { body: created } = await w.as.adminA.post('/pam/rules', body()).expect(201);
      const id = created.rule.id;
      const before = await rulesVersion(w.ids.orgA);
      expect((await w.as.adminA.delete(`/pam/rules/${id}`).expect(200)).body).toEqual({ success: true });
      expect(await rulesVersion(w.ids.orgA)).toBe(before + 1);
      expect(await ownerQuery(`SELECT 1 FROM pam_rules WHERE id = $1`, [id])).toEqual([]);
      expect(await ownerQuery(`SELECT 1 FROM audit_logs WHERE resource_id = $1 AND action = 'pam_rule.delete'`, [id])).toHaveLength(1);
      expectError(await w.as.adminA.delete(`/pam/rules/${id}`), 404, 'not_found');
      expectError(await w.as.adminA.patch(`/pam/rules/${id}`, { name: 'x' }), 404, 'not_found');
    });

    it('answers a path id that is not a UUID with 400 invalid_id', async () => {
      expectError(await w.as.adminA.patch('/pam/rules/nope', { name: 'x' }), 400, 'invalid_id');
      expectError(await w.as.adminA.delete('/pam/rules/nope'), 400, 'invalid_id');
    });
  });

  describe('list', () => {
    it('lists the organization rules in evaluation order: priority, then creation time', async () => {
      const { body: third } = await w.as.adminB.post('/pam/rules', body({ name: 'B third', priority: 300 })).expect(201);
      const { body: first } = await w.as.adminB.post('/pam/rules', body({ name: 'B first', priority: -5 })).expect(201);
      const { body: second } = await w.as.adminB.post('/pam/rules', body({ name: 'B second a', priority: 100 })).expect(201);
      const { body: secondLater } = await w.as.adminB.post('/pam/rules', body({ name: 'B second b', priority: 100 })).expect(201);
      const res = await w.as.adminB.get('/pam/rules').expect(200);
      expect(res.body.success).toBe(true);
      expect(res.body.rules.map((r: { id: string }) => r.id)).toEqual([first.rule.id, second.rule.id, secondLater.rule.id, third.rule.id]);
    });

    it('marks rules pinned to a tier their tool can no longer resolve to, and gives the valid tiers', async () => {
      const [stale] = await ownerQuery<{ id: string }>(
        `INSERT INTO pam_rules (org_id, name, verdict, match_tool_name, match_risk_tier) VALUES ($1, 'drifted', 'auto_approve', 'read_file', 2) RETURNING id`,
        [w.ids.orgA],
      );
      const { body: fine } = await w.as.adminA.post('/pam/rules', body({ matchSigner: null, matchToolName: 'run_script', matchRiskTier: 3 })).expect(201);
      const { body: list } = await w.as.readerA.get('/pam/rules').expect(200);
      const byId = new Map(list.rules.map((r: { id: string }) => [r.id, r]));
      expect(byId.get(stale.id)).toMatchObject({ matchRiskTierStale: true, matchRiskTierValidTiers: [0] });
      expect(byId.get(fine.rule.id)).toMatchObject({ matchRiskTierStale: false, matchRiskTierValidTiers: [3, 4] });
      expect(list.rules.find((r: { matchSigner: string | null }) => r.matchSigner)).toMatchObject({ matchRiskTierStale: false, matchRiskTierValidTiers: null });
    });
  });

  describe('permissions and MFA (spec P5)', () => {
    it('lets devices:read list rules but not write them', async () => {
      await w.as.readerA.get('/pam/rules').expect(200);
      const res = await w.as.readerA.post('/pam/rules', body());
      expectError(res, 403, 'forbidden');
      expect(res.body.permission).toBe('devices:write');
    });

    it('requires MFA for create, update and delete but not for the list', async () => {
      const { body: created } = await w.as.adminA.post('/pam/rules', body()).expect(201);
      await w.as.adminANoMfa.get('/pam/rules').expect(200);
      expectError(await w.as.adminANoMfa.post('/pam/rules', body()), 403, 'mfa_required');
      expectError(await w.as.adminANoMfa.patch(`/pam/rules/${created.rule.id}`, { name: 'x' }), 403, 'mfa_required');
      expectError(await w.as.adminANoMfa.delete(`/pam/rules/${created.rule.id}`), 403, 'mfa_required');
    });

    it('refuses an invalid bearer token with 401', async () => {
      const res = await w.as.adminA.get('/pam/rules').set('Authorization', 'Bearer nope');
      expectError(res, 401, 'unauthenticated');
    });
  });

  describe('sites', () => {
    it('accepts a site of the organization and refuses a site of another organization with 400', async () => {
      await w.as.adminA.post('/pam/rules', body({ siteId: w.ids.siteA2 })).expect(201);
      const res = await w.as.adminA.post('/pam/rules', body({ siteId: w.ids.siteB1 }));
      expectError(res, 400, 'validation_failed');
      expect(res.body.details[0].field).toBe('siteId');
      // A technician who reaches both organizations still cannot pin an org A rule to a site of B.
      expectError(await w.as.tech.post('/pam/rules', body({ orgId: w.ids.orgA, siteId: w.ids.siteB1 })), 400, 'validation_failed');
    });

    it('lets a site-restricted caller read and write only rules of their sites', async () => {
      const { body: orgWide } = await w.as.adminA.post('/pam/rules', body({ name: 'org-wide for site test' })).expect(201);
      const { body: otherSite } = await w.as.adminA.post('/pam/rules', body({ name: 'site A2 rule', siteId: w.ids.siteA2 })).expect(201);
      const { body: mine } = await w.as.siteA1.post('/pam/rules', body({ name: 'site A1 rule', siteId: w.ids.siteA1 })).expect(201);

      const { body: list } = await w.as.siteA1.get('/pam/rules').expect(200);
      expect(list.rules.length).toBeGreaterThan(0);
      expect(list.rules.every((r: { siteId: string }) => r.siteId === w.ids.siteA1)).toBe(true);
      expect(list.rules.map((r: { id: string }) => r.id)).toContain(mine.rule.id);

      expectError(await w.as.siteA1.post('/pam/rules', body()), 403, 'site_access_denied');
      expectError(await w.as.siteA1.post('/pam/rules', body({ siteId: w.ids.siteA2 })), 403, 'site_access_denied');
      expectError(await w.as.siteA1.patch(`/pam/rules/${orgWide.rule.id}`, { name: 'x' }), 403, 'site_access_denied');
      expectError(await w.as.siteA1.delete(`/pam/rules/${otherSite.rule.id}`), 403, 'site_access_denied');
      expectError(await w.as.siteA1.patch(`/pam/rules/${mine.rule.id}`, { siteId: null }), 403, 'site_access_denied');
      expectError(await w.as.siteA1.patch(`/pam/rules/${mine.rule.id}`, { siteId: w.ids.siteA2 }), 403, 'site_access_denied');
      await w.as.siteA1.patch(`/pam/rules/${mine.rule.id}`, { name: 'still mine' }).expect(200);
      await w.as.siteA1.delete(`/pam/rules/${mine.rule.id}`).expect(200);
    });
  });

  describe('signer group references', () => {
    it('accepts a signer group of the same organization and refuses one of another organization', async () => {
      const { body: groupA } = await w.as.adminA.post('/pam/signer-groups', { name: `Vendors ${++n}`, signers: ['Acme Corp'] }).expect(201);
      const { body: groupB } = await w.as.adminB.post('/pam/signer-groups', { name: `Vendors ${++n}`, signers: ['Acme Corp'] }).expect(201);
      const ok = await w.as.adminA.post('/pam/rules', body({ matchSigner: null, matchSignerGroupId: groupA.signerGroup.id })).expect(201);
      expect(ok.body.rule.matchSignerGroupId).toBe(groupA.signerGroup.id);
      for (const caller of [w.as.adminA, w.as.tech]) {
        const res = await caller.post('/pam/rules', body({ orgId: w.ids.orgA, matchSigner: null, matchSignerGroupId: groupB.signerGroup.id }));
        expectError(res, 400, 'validation_failed');
        expect(res.body.details[0].field).toBe('matchSignerGroupId');
      }
      expectError(await w.as.adminA.patch(`/pam/rules/${ok.body.rule.id}`, { matchSignerGroupId: groupB.signerGroup.id }), 400, 'validation_failed');
    });
  });

  describe('tenants', () => {
    it('answers another organization rule id with 404 and never lists it', async () => {
      const { body: created } = await w.as.adminA.post('/pam/rules', body({ name: 'only for A' })).expect(201);
      expectError(await w.as.adminB.patch(`/pam/rules/${created.rule.id}`, { name: 'stolen' }), 404, 'not_found');
      expectError(await w.as.adminB.delete(`/pam/rules/${created.rule.id}`), 404, 'not_found');
      const { body: listB } = await w.as.adminB.get('/pam/rules').expect(200);
      expect(listB.rules.every((r: { orgId: string }) => r.orgId === w.ids.orgB)).toBe(true);
      const [stored] = await ownerQuery<{ name: string }>(`SELECT name FROM pam_rules WHERE id = $1`, [created.rule.id]);
      expect(stored.name).toBe('only for A');
    });

    it('ignores an orgId in the body of an organization-scope caller pointing elsewhere: 404', async () => {
      expectError(await w.as.adminA.post('/pam/rules', body({ orgId: w.ids.orgB })), 404, 'not_found');
      expectError(await w.as.adminA.get(`/pam/rules?orgId=${w.ids.orgB}`), 404, 'not_found');
    });

    it('requires a partner technician to name the organization, and lists every reachable one', async () => {
      const res = await w.as.tech.post('/pam/rules', body());
      expectError(res, 400, 'validation_failed');
      expect(res.body.details[0].field).toBe('orgId');
      const created = await w.as.tech.post('/pam/rules', body({ orgId: w.ids.orgB, name: 'made by tech' })).expect(201);
      expect(created.body.rule.orgId).toBe(w.ids.orgB);
      const { body: all } = await w.as.tech.get('/pam/rules').expect(200);
      expect(new Set(all.rules.map((r: { orgId: string }) => r.orgId))).toEqual(new Set([w.ids.orgA, w.ids.orgB]));
      const { body: onlyB } = await w.as.tech.get(`/pam/rules?orgId=${w.ids.orgB}`).expect(200);
      expect(onlyB.rules.every((r: { orgId: string }) => r.orgId === w.ids.orgB)).toBe(true);
      expectError(await w.as.techA.get(`/pam/rules?orgId=${w.ids.orgB}`), 404, 'not_found');
      expectError(await w.as.techA.post('/pam/rules', body({ orgId: w.ids.orgB })), 404, 'not_found');
      expectError(await w.as.techA.patch(`/pam/rules/${created.body.rule.id}`, { name: 'x' }), 404, 'not_found');
    });
  });
});
