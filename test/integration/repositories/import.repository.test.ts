import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { PhaseName } from '../../../src/modules/imports/document/import-plan';
import { emptyReport, zeroCounts, type ImportReport } from '../../../src/modules/imports/import-report';
import { ImportRepository } from '../../../src/modules/imports/import.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Import jobs and their held-back matches. Jobs are requested in a tenant's context; their
 * bookkeeping (claim, heartbeat, progress, finish) runs in system context, as ImportJob runs it.
 */
describe('ImportRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let imports: ImportRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminA2 = () => orgPrincipal(t.orgA2);
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const plan = { format: 'contacts_csv', label: 'plan' };
  const request = (orgId: string | null, phases: PhaseName[] = ['contacts'], over: Partial<Parameters<ImportRepository['insert']>[0]> = {}) => ({
    partner_id: t.partnerP,
    org_id: orgId,
    format: 'contacts_csv' as const,
    dry_run: false,
    overwrite: false,
    phases,
    total_items: 3,
    report: emptyReport(phases, { dryRun: false, overwrite: false }),
    created_by: t.adminA,
    actor_type: 'user' as const,
    actor_id: t.adminA,
    scope: asAdminA(),
    plan_gz: gzipSync(JSON.stringify(plan)),
    ...over,
  });
  const queue = async (orgId: string = t.orgA, phases: PhaseName[] = ['contacts']) => (await m.as(orgId === t.orgA ? asAdminA() : asAdminA2(), () => imports.insert(request(orgId, phases))))!.id;
  const stored = async (id: string) => (await m.owner.query(`SELECT * FROM imports WHERE id = $1`, [id])).rows[0];
  const match = async (importId: string, orgId: string, sourceRef: string, createdAt = 'now()') =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO import_matches (org_id, import_id, source_ref, external_id, source, reason, created_at) VALUES ($1, $2, $3, $4, $5, 'email', ${createdAt}) RETURNING id`,
        [orgId, importId, sourceRef, `ext-${randomUUID()}`, { name: 'Held', email: null, phones: [], title: null, notes: null, siteId: null, externalId: 'x' }],
      )
    ).rows[0].id;

  beforeAll(async () => {
    m = await startMedium([ImportRepository]);
    imports = m.get(ImportRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('requesting and reading jobs', () => {
    it('stores a queued job with its compressed plan and answers its summary, report and scope', async () => {
      const row = await m.as(asAdminA(), () => imports.insert(request(t.orgA, ['contacts'])));
      expect(row).toMatchObject({
        partner_id: t.partnerP,
        org_id: t.orgA,
        format: 'contacts_csv',
        status: 'queued',
        phases: ['contacts'],
        phases_completed: 0,
        current_phase: null,
        total_items: 3,
        attempts: 0,
        report: emptyReport(['contacts'], { dryRun: false, overwrite: false }),
        scope: asAdminA(),
      });
      expect(row).not.toHaveProperty('plan_gz');
      const s = await stored(row!.id);
      expect(s.plan).toBeNull();
      expect(JSON.parse(gunzipSync(s.plan_gz).toString())).toEqual(plan);
    });

    it('finds a job with its pending matches and only the summary and phases of its report while it runs', async () => {
      const id = await queue();
      await m.owner.query(`UPDATE imports SET report = report || '{"created": [{"kind": "contact", "ref": "line 2"}]}' WHERE id = $1`, [id]);
      await match(id, t.orgA, 'line 3');
      const found = await m.as(asAdminA(), () => imports.find(id));
      expect(found).toMatchObject({ id, pending_matches: 1, report: { summary: zeroCounts(), phases: [{ name: 'contacts', status: 'not_run', counts: zeroCounts() }] } });
      expect(found!.report).not.toHaveProperty('created');
      expect(await m.as(asAdminA(), () => imports.find(randomUUID()))).toBeNull();
    });

    it('refuses a job of another tenant, and a partner-level job from a caller without the whole partner', async () => {
      await expect(m.as(asAdminA(), () => imports.insert(request(t.orgB, ['contacts'], { partner_id: t.partnerQ })))).rejects.toThrow(/row-level security/);
      await expect(m.as(asTech(false), () => imports.insert(request(null, ['organizations'], { format: 'interchange' })))).rejects.toThrow(/partner_wide_write_denied/);
      const wide = await m.as(asTech(), () => imports.insert(request(null, ['organizations'], { format: 'interchange', scope: asTech() })));
      expect(wide).toMatchObject({ org_id: null, partner_id: t.partnerP });
      expect(await m.as(asTech(false), () => imports.find(wide!.id))).toBeNull();
      expect(await m.as(asTech(), () => imports.find(wide!.id))).toMatchObject({ id: wide!.id });
    });

    it('lists the caller’s jobs newest first, by id among equal times, with the total', async () => {
      const ids = [await queue(t.orgA2), await queue(t.orgA2), await queue(t.orgA2)];
      await m.owner.query(`UPDATE imports SET created_at = '2026-01-01T00:00:00Z' WHERE id = ANY ($1::uuid[])`, [ids.slice(1)]);
      const tied = ids.slice(1).sort().reverse();
      const all = await m.as(asAdminA2(), () => imports.list(50, 0));
      expect(all.rows.map((r) => r.id)).toEqual([ids[0], ...tied]);
      expect(all.total).toBe(3);
      expect(all.rows[0].report).toEqual({ summary: zeroCounts(), phases: [{ name: 'contacts', status: 'not_run', counts: zeroCounts() }] });
      expect(await m.as(asAdminA2(), () => imports.list(1, 1))).toMatchObject({ rows: [{ id: tied[0] }], total: 3 });
    });

    it('reports the total on a page past the end', async () => {
      const listed = await m.as(asAdminA2(), () => imports.list(50, 0));
      expect(await m.as(asAdminA2(), () => imports.list(10, 40))).toEqual({ rows: [], total: listed.total });
    });

    it('shows nothing of another tenant’s jobs', async () => {
      const id = await queue();
      expect(await m.as(asAdminB(), () => imports.find(id))).toBeNull();
      expect(await m.as(asAdminB(), () => imports.list(50, 0))).toEqual({ rows: [], total: 0 });
      expect((await m.as(asAdminA(), () => imports.list(50, 0))).rows.every((r) => r.org_id === t.orgA)).toBe(true);
    });
  });

  describe('running jobs', () => {
    it('claims a queued job once, at its first phase, with the plan only when asked', async () => {
      const id = await queue(t.orgA, ['contacts', 'customFieldValues']);
      const claimed = await m.system(() => imports.claim(id, 60, true));
      expect(claimed).toMatchObject({ id, status: 'running', attempts: 1, current_phase: 'contacts', started_at: expect.any(Date), heartbeat_at: expect.any(Date), pending: null, scope: asAdminA() });
      expect(JSON.parse(gunzipSync(claimed!.plan_gz!).toString())).toEqual(plan);
      expect(await m.system(() => imports.claim(id, 60, true))).toBeNull();
      await m.owner.query(`UPDATE imports SET heartbeat_at = now() - interval '5 minutes', phases_completed = 1, report = report || '{"pending": {"contacts": {"created": []}}}' WHERE id = $1`, [id]);
      const again = await m.system(() => imports.claim(id, 60, false));
      expect(again).toMatchObject({ attempts: 2, current_phase: 'customFieldValues', started_at: claimed!.started_at, plan_gz: null, pending: { contacts: { created: [] } } });
      expect(again!.report).not.toHaveProperty('pending');
      expect(await m.as(asAdminB(), () => imports.claim(id, 0, false))).toBeNull();
    });

    it('answers the jobs left queued too long or running without a heartbeat, oldest first, up to the limit', async () => {
      const [queuedLong, runningStale, queuedNow, runningFresh] = [await queue(), await queue(), await queue(), await queue()];
      await m.owner.query(`UPDATE imports SET created_at = now() - interval '10 minutes' WHERE id = $1`, [queuedLong]);
      await m.owner.query(`UPDATE imports SET created_at = now() - interval '20 minutes', status = 'running', heartbeat_at = now() - interval '10 minutes' WHERE id = $1`, [runningStale]);
      await m.owner.query(`UPDATE imports SET status = 'running', heartbeat_at = now() WHERE id = $1`, [runningFresh]);
      const mine = new Set([queuedLong, runningStale, queuedNow, runningFresh]);
      const unfinished = async (limit: number) => (await m.as(asAdminA(), () => imports.unfinished(300, 300, limit))).map((r) => r.id).filter((id) => mine.has(id));
      expect(await unfinished(100)).toEqual([runningStale, queuedLong]);
      expect((await m.as(asAdminA(), () => imports.unfinished(300, 300, 1))).length).toBe(1);
      expect((await m.as(asAdminB(), () => imports.unfinished(300, 300, 100))).map((r) => r.id).filter((id) => mine.has(id))).toEqual([]);
    });

    it('beats the heart of a running job only', async () => {
      const [running, queued] = [await queue(), await queue()];
      await m.owner.query(`UPDATE imports SET status = 'running', heartbeat_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [running]);
      await m.system(() => imports.heartbeat(running));
      await m.system(() => imports.heartbeat(queued));
      expect((await stored(running)).heartbeat_at.getTime()).toBeGreaterThan(Date.parse('2000-01-01T00:00:00Z'));
      expect((await stored(queued)).heartbeat_at).toBeNull();
    });

    it('records each committed phase with its items once, and a dry run’s without items', async () => {
      const id = await queue(t.orgA, ['contacts', 'customFieldValues']);
      await m.system(() => imports.claim(id, 60, false));
      const summary = { ...zeroCounts(), created: 2 };
      const phases: ImportReport['phases'] = [
        { name: 'contacts', status: 'completed', counts: summary },
        { name: 'customFieldValues', status: 'not_run', counts: zeroCounts() },
      ];
      const items = { created: [{ kind: 'contact' as const, ref: 'line 2' }], updated: [], unchanged: [], heldBack: [], unresolved: [], conflicts: [] };
      const step = { phasesCompleted: 1, next: 'customFieldValues' as const, processed: 2, summary, phases, timings: [{ phase: 'contacts' as const, ms: 12 }], phase: 'contacts' as const, items };
      await m.system(() => imports.progress(id, step));
      const s = await stored(id);
      expect(s).toMatchObject({ phases_completed: 1, current_phase: 'customFieldValues', processed_items: 2, timings: [{ phase: 'contacts', ms: 12 }] });
      expect(s.report).toMatchObject({ summary, phases, dryRun: false, created: [] });
      expect(await m.system(() => imports.phaseItems(id))).toEqual([{ phase: 'contacts', items }]);
      await expect(m.system(() => imports.progress(id, step))).rejects.toThrow(/duplicate key/);
      await m.system(() => imports.progress(id, { ...step, phasesCompleted: 2, next: null, phase: 'customFieldValues', items: null }));
      expect(await m.system(() => imports.phaseItems(id))).toEqual([{ phase: 'contacts', items }]);
      expect(await m.as(asAdminB(), () => imports.phaseItems(id))).toEqual([]);
    });

    it('ends a job with its report, dropping the plan, and then finds the whole report', async () => {
      const id = await queue();
      await m.system(() => imports.claim(id, 60, false));
      const report: ImportReport = { ...emptyReport(['contacts'], { dryRun: false, overwrite: false }), created: [{ kind: 'contact', ref: 'line 2' }] };
      await m.system(() => imports.finish(id, { status: 'failed', report, timings: [{ phase: 'contacts', ms: 3 }], error: { phase: 'contacts', message: 'boom' } }));
      const s = await stored(id);
      expect(s).toMatchObject({ status: 'failed', current_phase: null, plan: null, plan_gz: null, processed_items: 0, error: { phase: 'contacts', message: 'boom' }, finished_at: expect.any(Date) });
      expect((await m.as(asAdminA(), () => imports.find(id)))!.report).toEqual(report);
      await m.system(() => imports.finish(id, { status: 'completed', report, timings: [], error: null, processed: 3 }));
      expect(await stored(id)).toMatchObject({ status: 'completed', processed_items: 3, error: null });
    });
  });

  describe('held-back matches', () => {
    it('lists an import’s matches by time, then source reference, then id, and finds one', async () => {
      const id = await queue();
      const at = `'2026-01-01T00:00:00Z'::timestamptz`;
      const b = await match(id, t.orgA, 'line 9', at);
      const a = await match(id, t.orgA, 'line 10', at);
      const earliest = await match(id, t.orgA, 'line 99', `'2025-12-31T00:00:00Z'::timestamptz`);
      expect((await m.as(asAdminA(), () => imports.matches(id))).map((r) => r.id)).toEqual([earliest, a, b]);
      expect(await m.as(asAdminA(), () => imports.findMatch(id, a))).toMatchObject({ id: a, import_id: id, source_ref: 'line 10', status: 'pending', reason: 'email' });
      expect(await m.as(asAdminA(), () => imports.findMatch(randomUUID(), a))).toBeNull();
      expect(await m.as(asAdminA(), () => imports.matches(randomUUID()))).toEqual([]);
    });

    it('resolves a pending match once', async () => {
      const id = await queue();
      const matchId = await match(id, t.orgA, 'line 2');
      const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO contacts (org_id, name) VALUES ($1, 'Kept') RETURNING id`, [t.orgA]);
      const resolved = await m.as(asAdminA(), () => imports.resolveMatch(matchId, 'merged', rows[0].id, t.adminA));
      expect(resolved).toMatchObject({ id: matchId, status: 'merged', resolved_contact_id: rows[0].id, resolved_by: t.adminA, resolved_at: expect.any(Date) });
      expect(await m.as(asAdminA(), () => imports.resolveMatch(matchId, 'created', rows[0].id, t.adminA))).toBeNull();
      expect((await m.as(asAdminA(), () => imports.find(id)))!.pending_matches).toBe(0);
    });

    it('shows and resolves nothing of another tenant’s matches', async () => {
      const id = await queue();
      const matchId = await match(id, t.orgA, 'line 2');
      expect(await m.as(asAdminB(), () => imports.matches(id))).toEqual([]);
      expect(await m.as(asAdminB(), () => imports.findMatch(id, matchId))).toBeNull();
      const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO contacts (org_id, name) VALUES ($1, 'Of B') RETURNING id`, [t.orgB]);
      expect(await m.as(asAdminB(), () => imports.resolveMatch(matchId, 'merged', rows[0].id, t.adminB))).toBeNull();
      expect((await m.owner.query(`SELECT status FROM import_matches WHERE id = $1`, [matchId])).rows).toEqual([{ status: 'pending' }]);
    });
  });

  describe('partner lookups', () => {
    it('answers the partner’s organizations the caller reaches, and its customer links from one source', async () => {
      expect((await m.as(asTech(), () => imports.partnerOrgIds(t.partnerP))).map((r) => r.id).sort()).toEqual([t.orgA, t.orgA2].sort());
      expect(await m.as(asAdminA(), () => imports.partnerOrgIds(t.partnerP))).toEqual([{ id: t.orgA }]);
      expect(await m.as(asTech(), () => imports.partnerOrgIds(t.partnerQ))).toEqual([]);
      await m.owner.query(
        `INSERT INTO import_links (partner_id, source_system, kind, external_id, org_id, local_id) VALUES
           ($1, 'acme', 'customer', 'c-1', $2, $2), ($1, 'acme', 'location', 'l-1', $2, $3), ($1, 'other', 'customer', 'c-1', $4, $4), ($5, 'acme', 'customer', 'c-9', $6, $6)`,
        [t.partnerP, t.orgA, t.siteA1, t.orgA2, t.partnerQ, t.orgB],
      );
      expect(await m.as(asTech(), () => imports.customerLinks(t.partnerP, 'acme'))).toEqual([{ external_id: 'c-1', local_id: t.orgA }]);
      expect(await m.as(asTech(), () => imports.customerLinks(t.partnerQ, 'acme'))).toEqual([]);
      expect(await m.as(asAdminA2(), () => imports.customerLinks(t.partnerP, 'acme'))).toEqual([]);
    });
  });
});
