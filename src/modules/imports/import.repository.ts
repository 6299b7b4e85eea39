import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import type { TenantScope } from '../../infra/database/tenant-scope';
import type { ImportFormat, ImportPlan, PhaseName } from './document/import-plan';
import type { ImportReport } from './import-report';

export interface ImportRow {
  id: string;
  partner_id: string;
  org_id: string | null;
  format: ImportFormat;
  dry_run: boolean;
  overwrite: boolean;
  status: 'queued' | 'running' | 'completed' | 'failed';
  phases: PhaseName[];
  phases_completed: number;
  current_phase: PhaseName | null;
  processed_items: number;
  total_items: number;
  plan: ImportPlan | null;
  report: ImportReport;
  timings: { phase: PhaseName; ms: number }[];
  error: { phase: PhaseName | null; message: string } | null;
  attempts: number;
  created_by: string | null;
  actor_type: 'user' | 'api_key';
  actor_id: string | null;
  scope: TenantScope;
  created_at: Date;
  started_at: Date | null;
  heartbeat_at: Date | null;
  finished_at: Date | null;
  /** Read by find and list only. */
  pending_matches?: number;
}

export interface MatchRow {
  id: string;
  org_id: string;
  import_id: string;
  source_ref: string;
  external_id: string;
  source: { name: string; email: string | null; phones: { type: string; number: string }[]; title: string | null; notes: string | null; siteId: string | null; externalId: string };
  candidate_id: string | null;
  reason: 'email' | 'name';
  status: 'pending' | 'merged' | 'created';
  resolved_contact_id: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
}

const SUMMARY = `id, partner_id, org_id, format, dry_run, overwrite, status, phases, phases_completed, current_phase, processed_items, total_items,
  timings, error, attempts, created_by, actor_type, actor_id, created_at, started_at, heartbeat_at, finished_at`;
/** Held-back matches still pending, counted the same way for the list and for one import. */
const PENDING_MATCHES = `(SELECT count(*) FROM import_matches m WHERE m.import_id = imports.id AND m.status = 'pending')::int AS pending_matches`;
/** The report while a job runs: its summary and phases (the items wait under `pending`, see progress). */
const PROGRESS_REPORT = `jsonb_build_object('summary', report->'summary', 'phases', report->'phases')`;

/** One committed phase's share of the report, kept in the job row until the job ends. */
export interface PhaseItems {
  items: Pick<ImportReport, 'created' | 'updated' | 'unchanged' | 'heldBack' | 'unresolved' | 'conflicts'>;
}
const json = (v: unknown) => JSON.stringify(v);

/** Import job rows and held-back matches. Job bookkeeping runs in system context (see ImportJob). */
@Injectable()
export class ImportRepository {
  constructor(private readonly db: DbService) {}

  /** `plan_gz`: the plan as gzip-compressed JSON (see gzipPlan); the jsonb `plan` is left NULL. */
  insert(r: Pick<ImportRow, 'partner_id' | 'org_id' | 'format' | 'dry_run' | 'overwrite' | 'phases' | 'total_items' | 'report' | 'created_by' | 'actor_type' | 'actor_id' | 'scope'> & { plan_gz: Buffer }): Promise<ImportRow | null> {
    return this.db.one<ImportRow>(
      `INSERT INTO imports (partner_id, org_id, format, dry_run, overwrite, phases, total_items, plan_gz, report, created_by, actor_type, actor_id, scope)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bytea, $9::jsonb, $10, $11, $12, $13::jsonb) RETURNING ${SUMMARY}, report, scope`,
      [r.partner_id, r.org_id, r.format, r.dry_run, r.overwrite, r.phases, r.total_items, r.plan_gz, json(r.report), r.created_by, r.actor_type, r.actor_id, json(r.scope)],
    );
  }

  /**
   * The job with its progress (summary and per-phase counts); the full report, which may hold
   * tens of thousands of items, only once the job has ended.
   */
  find(id: string): Promise<ImportRow | null> {
    return this.db.one<ImportRow>(
      `SELECT ${SUMMARY}, ${PENDING_MATCHES},
              CASE WHEN status IN ('completed', 'failed') THEN report ELSE ${PROGRESS_REPORT} END AS report
         FROM imports WHERE id = $1`,
      [id],
    );
  }

  /** A page of the caller's jobs and their total; a page past the end counts again, as the device and contact lists do. */
  async list(limit: number, offset: number): Promise<{ rows: ImportRow[]; total: number }> {
    const rows = await this.db.rows<ImportRow & { total: string }>(
      `SELECT ${SUMMARY}, ${PENDING_MATCHES}, ${PROGRESS_REPORT} AS report, count(*) OVER () AS total
         FROM imports ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
      [limit, offset],
    );
    if (rows.length) return { rows: rows.map(({ total: _t, ...r }) => r as ImportRow), total: Number(rows[0].total) };
    if (offset <= 0) return { rows: [], total: 0 };
    // The window count has no row to ride on past the end.
    const counted = await this.db.one<{ n: string }>(`SELECT count(*) AS n FROM imports`);
    return { rows: [], total: Number(counted?.n ?? 0) };
  }

  /**
   * Takes a job that is queued, or running with a heartbeat older than `staleSeconds` (its
   * instance died). One statement, so two instances never both take it. The plan (megabytes for
   * a large export) is returned only when the caller does not hold it already; the report comes
   * with the items of the phases an earlier attempt committed (`pending`).
   */
  claim(id: string, staleSeconds: number, withPlan: boolean): Promise<(ImportRow & { plan_gz: Buffer | null; pending: Record<string, PhaseItems['items']> | null }) | null> {
    return this.db.one(
      `UPDATE imports SET status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()), heartbeat_at = now(),
              current_phase = phases[phases_completed + 1]
        WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND heartbeat_at < now() - make_interval(secs => $2)))
        RETURNING ${SUMMARY}, scope, report - 'pending' AS report, report->'pending' AS pending,
               CASE WHEN $3 THEN plan END AS plan, CASE WHEN $3 THEN plan_gz END AS plan_gz`,
      [id, staleSeconds, withPlan],
    );
  }

  unfinished(queuedForSeconds: number, staleSeconds: number, limit: number): Promise<{ id: string }[]> {
    return this.db.rows(
      `SELECT id FROM imports
        WHERE (status = 'queued' AND created_at < now() - make_interval(secs => $1))
           OR (status = 'running' AND heartbeat_at < now() - make_interval(secs => $2))
        ORDER BY created_at LIMIT $3`,
      [queuedForSeconds, staleSeconds, limit],
    );
  }

  async heartbeat(id: string): Promise<void> {
    await this.db.exec(`UPDATE imports SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`, [id]);
  }

  /**
   * Records a committed phase: counts, timings, the phase now running, and the phase's own report
   * items as a row of import_phase_items, written once. Nothing of the job row grows with the
   * document (issue 30: accumulating the items in the job's report made each phase commit, and
   * each progress poll, read and rewrite megabytes: 3-5 s per phase boundary on a 60,000-record
   * document). `items` null: a dry run, whose items are never resumed.
   */
  async progress(
    id: string,
    p: { phasesCompleted: number; next: PhaseName | null; processed: number; summary: ImportReport['summary']; phases: ImportReport['phases']; timings: ImportRow['timings']; phase: PhaseName; items: PhaseItems['items'] | null },
  ): Promise<void> {
    await this.db.exec(
      `WITH items AS (
         INSERT INTO import_phase_items (import_id, ordinal, phase, items)
         SELECT $1::uuid, $2::int - 1, $9::text, $8::json WHERE $10::boolean
       )
       UPDATE imports
          SET phases_completed = $2, current_phase = $3, processed_items = $4, timings = $5::jsonb, heartbeat_at = now(),
              report = report || jsonb_build_object('summary', $6::jsonb, 'phases', $7::jsonb)
        WHERE id = $1`,
      [id, p.phasesCompleted, p.next, p.processed, json(p.timings), json(p.summary), json(p.phases), p.items ? json(p.items) : null, p.phase, p.items !== null],
    );
  }

  /** The report items of the phases a real run committed, in phase order (see progress). */
  phaseItems(id: string): Promise<{ phase: PhaseName; items: PhaseItems['items'] }[]> {
    return this.db.rows(`SELECT phase, items FROM import_phase_items WHERE import_id = $1 ORDER BY ordinal`, [id]);
  }

  /**
   * Ends a job; the plan (contact details included) is dropped with it. `report`: what the
   * import_phase_items rows do not hold already (the items of a real run's phases are read from
   * there, see ImportService.get).
   */
  async finish(id: string, f: { status: 'completed' | 'failed'; report: ImportReport; timings: ImportRow['timings']; error: ImportRow['error']; processed?: number }): Promise<void> {
    await this.db.exec(
      `UPDATE imports SET status = $2, report = $3::jsonb, timings = $4::jsonb, error = $5::jsonb, processed_items = coalesce($6, processed_items),
              current_phase = NULL, plan = NULL, plan_gz = NULL, finished_at = now()
        WHERE id = $1`,
      [id, f.status, json(f.report), json(f.timings), f.error ? json(f.error) : null, f.processed ?? null],
    );
  }

  matches(importId: string): Promise<MatchRow[]> {
    return this.db.rows<MatchRow>(`SELECT * FROM import_matches WHERE import_id = $1 ORDER BY created_at, source_ref, id`, [importId]);
  }

  findMatch(importId: string, id: string): Promise<MatchRow | null> {
    return this.db.one<MatchRow>(`SELECT * FROM import_matches WHERE import_id = $1 AND id = $2`, [importId, id]);
  }

  /** Compare-and-swap from pending, so two acknowledgements cannot both apply. */
  resolveMatch(id: string, status: 'merged' | 'created', contactId: string, userId: string | null): Promise<MatchRow | null> {
    return this.db.one<MatchRow>(
      `UPDATE import_matches SET status = $2, resolved_contact_id = $3, resolved_by = $4, resolved_at = now()
        WHERE id = $1 AND status = 'pending' RETURNING *`,
      [id, status, contactId, userId],
    );
  }

  partnerOrgIds(partnerId: string): Promise<{ id: string }[]> {
    return this.db.rows(`SELECT id FROM organizations WHERE partner_id = $1`, [partnerId]);
  }

  customerLinks(partnerId: string, source: string): Promise<{ external_id: string; local_id: string }[]> {
    return this.db.rows(`SELECT external_id, local_id FROM import_links WHERE partner_id = $1 AND source_system = $2 AND kind = 'customer'`, [partnerId, source]);
  }
}
