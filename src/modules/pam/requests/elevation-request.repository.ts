import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DbService, prepared, type PreparedSql } from '../../../infra/database/db.service';
import { isoTimestamp } from '../../../infra/database/sql-text';
import type { FlowType } from '../rules/engine/rule.types';
import type { ElevationRequestListRow, ElevationRequestRow, ElevationStatus } from './elevation-request.types';

/**
 * What a request is now: a pending request past its TTL, or an elevation past its window, is
 * expired even while the sweeper has not yet rewritten its row. `ttl` is the placeholder of
 * the pending TTL in minutes.
 */
const effectiveStatus = (alias: string, ttl: string) => `
  CASE WHEN ${alias}.status = 'pending' AND ${alias}.requested_at <= now() - make_interval(mins => ${ttl}) THEN 'expired'
       WHEN ${alias}.status IN ('approved', 'auto_approved', 'actuating') AND ${alias}.expires_at <= now() THEN 'expired'
       ELSE ${alias}.status END`;

/** The timestamps come formatted as the API writes them (isoTimestamp): a page of 100 requests holds 300 of them. */
const COLUMNS = `
  e.id, e.org_id, e.site_id, e.device_id, e.flow_type, e.status, e.subject_username, e.subject_user_id,
  e.target_executable_path, e.target_executable_signer, ${isoTimestamp('e.requested_at')} AS requested_at,
  ${isoTimestamp('e.expires_at')} AS expires_at, e.decision_source,
  e.matched_policy_id, e.matched_policy_name, e.pam_rule_id, e.pam_rule_name, e.approved_by, e.denied_by,
  e.approved_by_name, e.denied_by_name, e.revoked_by_name, e.tool_name, e.risk_tier, e.action_digest,
  ${isoTimestamp('e.actuated_at')} AS actuated_at`;

/** The name shown for whoever decided: the user's name (or email), else the API key's name. */
const ACTOR_NAME = (userParam: string, keyParam: string) => `coalesce(
  (SELECT coalesce(nullif(u.name, ''), u.email) FROM users u WHERE u.id = ${userParam}),
  (SELECT 'API key ' || k.name FROM api_keys k WHERE k.id = ${keyParam}))`;

export interface ElevationRequestFilter {
  /** The organizations the caller reaches. Row-level security enforces them anyway; stating them lets the planner use the org-leading indexes. */
  orgIds: readonly string[];
  orgId?: string;
  status?: ElevationStatus;
  flowType?: FlowType;
  deviceId?: string;
  siteId?: string;
  from?: Date;
  to?: Date;
  /** null: every site. */
  siteIds: readonly string[] | null;
}

export interface Actor {
  userId: string | null;
  apiKeyId: string | null;
}

export interface TransitionedRow {
  id: string;
  org_id: string;
  site_id: string;
  device_id: string;
  from_status: ElevationStatus;
  status: ElevationStatus;
  expires_at: Date | null;
  actuated_at: Date | null;
}

/** Positional parameters of a statement built from optional filters; the TTL is bound once, when first used. */
class Params {
  readonly values: unknown[] = [];
  private ttlRef: string | null = null;

  constructor(private readonly ttlMinutes: number) {}

  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  ttl(): string {
    this.ttlRef ??= `${this.bind(this.ttlMinutes)}::int`;
    return this.ttlRef;
  }
}

/**
 * Equality for one organization, so that an index scan also yields requested_at order (PostgreSQL
 * 15 loses the order of an index scan over an array of leading values).
 */
function orgPredicate(orgIds: readonly string[], params: Params): string {
  return orgIds.length === 1 ? `e.org_id = ${params.bind(orgIds[0])}` : `e.org_id = ANY(${params.bind(orgIds)}::uuid[])`;
}

/** The organizations a list reads: the one it names, else every one the caller reaches. */
function orgsOf(f: ElevationRequestFilter): readonly string[] {
  return f.orgId ? [f.orgId] : f.orgIds;
}

/** The effective-status condition of a list's status filter; null without one. */
function statusClause(status: ElevationStatus | undefined, params: Params): string | null {
  switch (status) {
    case undefined:
      return null;
    case 'pending':
      return `e.status = 'pending' AND e.requested_at > now() - make_interval(mins => ${params.ttl()})`;
    case 'approved':
    case 'auto_approved':
    case 'actuating':
      return `e.status = ${params.bind(status)} AND e.expires_at > now()`;
    case 'expired':
      return `(e.status = 'expired'
               OR (e.status = 'pending' AND e.requested_at <= now() - make_interval(mins => ${params.ttl()}))
               OR (e.status IN ('approved', 'auto_approved', 'actuating') AND e.expires_at <= now()))`;
    default:
      return `e.status = ${params.bind(status)}`;
  }
}

/** One declared statement per shape of the list (which filters are set): a few hundred at most. */
const listStatements = new Map<string, PreparedSql>();

function listStatement(text: string): PreparedSql {
  let statement = listStatements.get(text);
  if (!statement) {
    statement = prepared(`pam_request_list_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text);
    listStatements.set(text, statement);
  }
  return statement;
}

const RETURNING = `RETURNING e.id, e.org_id, e.site_id, e.device_id, prev.status AS from_status, e.status, e.expires_at, e.actuated_at`;

@Injectable()
export class ElevationRequestRepository {
  constructor(private readonly db: DbService) {}

  /**
   * The WHERE clause of a list: the filters other than status, then the status. A status filter
   * means the effective status, so a pending request past its TTL is listed as expired, never as
   * pending, and each branch keeps an index usable.
   */
  private where(f: ElevationRequestFilter, params: Params, org?: string): string {
    const base = this.baseWhere(f, params, org);
    const status = statusClause(f.status, params);
    return status ? `${base} AND ${status}` : base;
  }

  /** `org`: the organization predicate when it is not the caller's organizations (one of them, per lateral probe). */
  private baseWhere(f: ElevationRequestFilter, params: Params, org?: string): string {
    const c: string[] = [];
    if (f.siteIds !== null) c.push(`e.site_id = ANY(${params.bind(f.siteIds)}::uuid[])`);
    c.push(org ?? orgPredicate(orgsOf(f), params));
    if (f.flowType) c.push(`e.flow_type = ${params.bind(f.flowType)}`);
    if (f.deviceId) c.push(`e.device_id = ${params.bind(f.deviceId)}`);
    if (f.siteId) c.push(`e.site_id = ${params.bind(f.siteId)}`);
    if (f.from) c.push(`e.requested_at >= ${params.bind(f.from)}`);
    if (f.to) c.push(`e.requested_at <= ${params.bind(f.to)}`);
    return c.join(' AND ');
  }

  /**
   * The exact number of requests matching a list's filters, as an expression. Without a time
   * range it reads elevation_request_counts (a few rows per device, kept by triggers in the same
   * transaction as the requests, migration 1763700960000) instead of counting requests: stored
   * statuses that are final there are the effective ones; pending and in-force requests are few
   * (the sweeper ends them at their deadline) and are counted from their indexes; expired adds to
   * its counter the requests past a deadline that no sweep has rewritten yet. With a time range
   * it counts the matching index entries of that range.
   */
  private totalExpression(f: ElevationRequestFilter, params: Params): string {
    const count = (where: string) => `(SELECT count(*) FROM elevation_requests e WHERE ${where})`;
    if (f.from || f.to) return count(this.where(f, params));
    switch (f.status) {
      case 'pending':
      case 'approved':
      case 'auto_approved':
      case 'actuating':
        return count(this.where(f, params));
      case 'expired': {
        const ttl = params.ttl();
        return `${this.counted(f, 'expired', params)}
          + ${count(`${this.baseWhere(f, params)} AND e.status = 'pending' AND e.requested_at <= now() - make_interval(mins => ${ttl})`)}
          + ${count(`${this.baseWhere(f, params)} AND e.status IN ('approved', 'auto_approved', 'actuating') AND e.expires_at <= now()`)}`;
      }
      default:
        return this.counted(f, f.status, params);
    }
  }

  /** The sum of the counters matching the filters (no time range) and a stored status, if any. */
  private counted(f: ElevationRequestFilter, status: ElevationStatus | undefined, params: Params): string {
    const c: string[] = [];
    if (f.siteIds !== null) c.push(`c.site_id = ANY(${params.bind(f.siteIds)}::uuid[])`);
    const orgIds = orgsOf(f);
    c.push(orgIds.length === 1 ? `c.org_id = ${params.bind(orgIds[0])}` : `c.org_id = ANY(${params.bind(orgIds)}::uuid[])`);
    if (f.flowType) c.push(`c.flow_type = ${params.bind(f.flowType)}`);
    if (f.deviceId) c.push(`c.device_id = ${params.bind(f.deviceId)}`);
    if (f.siteId) c.push(`c.site_id = ${params.bind(f.siteId)}`);
    if (status) c.push(`c.status = ${params.bind(status)}`);
    return `(SELECT coalesce(sum(c.n), 0) FROM elevation_request_counts c WHERE ${c.join(' AND ')})`;
  }

  /**
   * The page and the total in one statement (one round trip); the count row comes back even past
   * the last page, and no page is read past the total (a filter matching nothing reads no index
   * for its page). The total is materialized so that it is computed once. Over several
   * organizations the page merges each organization's newest `offset + limit` (one ordered index
   * probe each): `org_id = ANY` would lose the index order and sort every match. The text
   * depends only on which filters are set, so each shape is declared once as a statement that
   * travels in one message with the caller's settings (DbService, prepared; the route is
   * @OneStatement, so that message is the whole request's).
   */
  async list(f: ElevationRequestFilter, ttlMinutes: number, page: { limit: number; offset: number }): Promise<{ rows: ElevationRequestListRow[]; total: number }> {
    const params = new Params(ttlMinutes);
    const ttl = params.ttl();
    const total = this.totalExpression(f, params);
    const limit = `${params.bind(page.limit)}::int8`;
    const offset = `${params.bind(page.offset)}::int8`;
    const order = 'ORDER BY e.requested_at DESC, e.id DESC';
    const orgIds = orgsOf(f);
    const pageRows =
      orgIds.length === 1
        ? `SELECT * FROM elevation_requests e WHERE ${this.where(f, params)} AND total.total > ${offset}
            ${order} LIMIT ${limit} OFFSET ${offset}`
        : `SELECT e.* FROM unnest(${params.bind(orgIds)}::uuid[]) AS o(id)
             CROSS JOIN LATERAL (SELECT * FROM elevation_requests e WHERE ${this.where(f, params, 'e.org_id = o.id')}
                                  ${order} LIMIT ${limit} + ${offset}) e
            WHERE total.total > ${offset}
            ${order} LIMIT ${limit} OFFSET ${offset}`;
    const rows = await this.db.rows<ElevationRequestListRow & { total: string }>(
      listStatement(`WITH total AS MATERIALIZED (SELECT ${total} AS total)
       SELECT total.total, ${COLUMNS}, ${effectiveStatus('e', ttl)} AS effective_status, d.hostname AS device_hostname, s.name AS site_name
         FROM total
         LEFT JOIN LATERAL (${pageRows}) e ON true
         LEFT JOIN devices d ON d.org_id = e.org_id AND d.id = e.device_id
         LEFT JOIN sites s ON s.org_id = e.org_id AND s.id = e.site_id
        ORDER BY e.requested_at DESC, e.id DESC`),
      params.values,
    );
    return { rows: rows.filter((r) => r.id !== null), total: Number(rows[0].total) };
  }

  /** Elevations in force now, soonest to end first. */
  active(orgIds: readonly string[], siteIds: readonly string[] | null, limit: number): Promise<ElevationRequestListRow[]> {
    const params = new Params(0);
    const org = orgPredicate(orgIds, params);
    const sites = `${params.bind(siteIds)}::uuid[]`;
    return this.db.rows<ElevationRequestListRow>(
      `SELECT ${COLUMNS}, e.status AS effective_status, d.hostname AS device_hostname, s.name AS site_name
         FROM (SELECT * FROM elevation_requests e
                WHERE ${org} AND e.status IN ('approved', 'auto_approved', 'actuating') AND e.expires_at > now()
                  AND (${sites} IS NULL OR e.site_id = ANY(${sites}))
                ORDER BY e.expires_at, e.id LIMIT ${params.bind(limit)}) e
         LEFT JOIN devices d ON d.org_id = e.org_id AND d.id = e.device_id
         LEFT JOIN sites s ON s.org_id = e.org_id AND s.id = e.site_id
        ORDER BY e.expires_at, e.id`,
      params.values,
    );
  }

  find(id: string, ttlMinutes: number): Promise<ElevationRequestListRow | null> {
    return this.db.one<ElevationRequestListRow>(
      `SELECT ${COLUMNS}, ${effectiveStatus('e', '$2')} AS effective_status, d.hostname AS device_hostname, s.name AS site_name
         FROM elevation_requests e
         LEFT JOIN devices d ON d.org_id = e.org_id AND d.id = e.device_id
         LEFT JOIN sites s ON s.org_id = e.org_id AND s.id = e.site_id
        WHERE e.id = $1`,
      [id, ttlMinutes],
    );
  }

  /**
   * pending → approved as one compare-and-swap: only a request still pending and inside its TTL
   * moves, and only by a known person other than the one who filed it (`actor.userId` is the
   * person, also behind an API key), so a service check that is forgotten still fails closed. The
   * table's constraint elevation_requests_no_self_approval says the same.
   */
  approve(id: string, actor: Actor, durationMinutes: number, reason: string | null, ttlMinutes: number): Promise<TransitionedRow | null> {
    return this.db.one<TransitionedRow>(
      `UPDATE elevation_requests e
          SET status = 'approved', decision_source = 'human', decided_at = now(), approved_by = $2,
              approved_by_name = ${ACTOR_NAME('$2::uuid', '$3::uuid')}, duration_minutes = $4,
              expires_at = now() + make_interval(mins => $4), decision_reason = $5, updated_at = now()
         FROM (SELECT id, status FROM elevation_requests WHERE id = $1 FOR UPDATE) prev
        WHERE e.id = prev.id AND e.status = 'pending' AND e.requested_at > now() - make_interval(mins => $6)
          AND $2::uuid IS NOT NULL AND e.subject_user_id IS DISTINCT FROM $2::uuid
        ${RETURNING}`,
      [id, actor.userId, actor.apiKeyId, durationMinutes, reason, ttlMinutes],
    );
  }

  /** pending → denied as one compare-and-swap (status and TTL in the predicate). */
  deny(id: string, actor: Actor, reason: string | null, ttlMinutes: number): Promise<TransitionedRow | null> {
    return this.db.one<TransitionedRow>(
      `UPDATE elevation_requests e
          SET status = 'denied', decision_source = 'human', decided_at = now(), denied_by = $2,
              denied_by_name = ${ACTOR_NAME('$2::uuid', '$3::uuid')}, decision_reason = $4, updated_at = now()
         FROM (SELECT id, status FROM elevation_requests WHERE id = $1 FOR UPDATE) prev
        WHERE e.id = prev.id AND e.status = 'pending' AND e.requested_at > now() - make_interval(mins => $5)
        ${RETURNING}`,
      [id, actor.userId, actor.apiKeyId, reason, ttlMinutes],
    );
  }

  /** approved, auto_approved or actuating → revoked, only inside the elevation's window. */
  revoke(id: string, actor: Actor, reason: string): Promise<TransitionedRow | null> {
    return this.db.one<TransitionedRow>(
      `UPDATE elevation_requests e
          SET status = 'revoked', revoked_by = $2, revoked_by_name = ${ACTOR_NAME('$2::uuid', '$3::uuid')},
              revoked_at = now(), revoke_reason = $4, updated_at = now()
         FROM (SELECT id, status FROM elevation_requests WHERE id = $1 FOR UPDATE) prev
        WHERE e.id = prev.id AND e.status IN ('approved', 'auto_approved', 'actuating') AND e.expires_at > now()
        ${RETURNING}`,
      [id, actor.userId, actor.apiKeyId, reason],
    );
  }

  /** approved → actuating: the single-use claim of an actuation. */
  claimActuation(id: string, deviceId: string): Promise<TransitionedRow | null> {
    return this.db.one<TransitionedRow>(
      `UPDATE elevation_requests e SET status = 'actuating', actuated_at = now(), updated_at = now()
         FROM (SELECT id, status FROM elevation_requests WHERE id = $1 FOR UPDATE) prev
        WHERE e.id = prev.id AND e.device_id = $2 AND e.status = 'approved' AND e.expires_at > now()
        ${RETURNING}`,
      [id, deviceId],
    );
  }

  /** actuating → approved after a failed actuation, if the window is still open, so it can be actuated again. */
  releaseActuation(id: string): Promise<TransitionedRow | null> {
    return this.db.one<TransitionedRow>(
      `UPDATE elevation_requests e SET status = 'approved', actuated_at = NULL, updated_at = now()
         FROM (SELECT id, status FROM elevation_requests WHERE id = $1 FOR UPDATE) prev
        WHERE e.id = prev.id AND e.status = 'actuating' AND e.expires_at > now()
        ${RETURNING}`,
      [id],
    );
  }

  /**
   * Mobile approval requests of a decided request can no longer be decided: all of them expire,
   * except the one whose decision this was, and their undelivered pushes are cancelled.
   */
  async expireApprovalRequests(orgId: string, elevationRequestId: string, exceptApprovalId: string | null): Promise<number> {
    const [row] = await this.db.rows<{ expired: string }>(
      `WITH expired AS (
         UPDATE pam_approval_requests SET status = 'expired'
          WHERE org_id = $1 AND elevation_request_id = $2 AND status = 'pending' AND id IS DISTINCT FROM $3::uuid
          RETURNING id
       ), cancelled AS (
         UPDATE push_outbox o SET status = 'cancelled' FROM expired x
          WHERE o.org_id = $1 AND o.approval_request_id = x.id AND o.status = 'pending'
       )
       SELECT count(*) AS expired FROM expired`,
      [orgId, elevationRequestId, exceptApprovalId],
    );
    return Number(row.expired);
  }

  /**
   * An elevation that ends after its actuation had been claimed must be taken back on the device;
   * an actuation the agent has not fetched yet is withdrawn instead of delivered.
   */
  async queueRevokeOnDevice(orgId: string, deviceId: string, elevationRequestId: string, why: 'revoked' | 'expired'): Promise<string> {
    const row = await this.db.one<{ id: string }>(
      `WITH withdrawn AS (
         UPDATE device_commands SET status = 'failed', error = $4, completed_at = now()
          WHERE org_id = $1 AND elevation_request_id = $3 AND type = 'actuate_elevation' AND status = 'queued'
       )
       INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id)
       VALUES ($1, $2, 'revoke_elevation', jsonb_build_object('elevationRequestId', $3::uuid), $3)
       RETURNING id`,
      [orgId, deviceId, elevationRequestId, `Elevation ${why} before the command was delivered`],
    );
    return row!.id;
  }

  /**
   * One sweep: every request past its deadline, across organizations, moves to expired in a single
   * statement; app_pam_end_elevations writes, in the same statement, its event, expires its mobile
   * approval requests, cancels their undelivered pushes and, for claimed actuations, queues a
   * revoke_elevation command (the caller records the audit rows through AuditService in the same
   * transaction). Rows locked by a concurrent transition are skipped (SKIP LOCKED) and picked up by
   * the next sweep if still due, so any number of instances may sweep at once.
   */
  async expireDue(ttlMinutes: number, batch: number): Promise<{ id: string; org_id: string; from_status: ElevationStatus }[]> {
    return this.db.rows(
      `SELECT id, org_id, from_status FROM app_pam_end_elevations(ARRAY(
         SELECT id FROM elevation_requests
          WHERE (status = 'pending' AND requested_at <= now() - make_interval(mins => $1))
             OR (status IN ('approved', 'auto_approved', 'actuating') AND expires_at <= now())
          LIMIT $2 FOR UPDATE SKIP LOCKED
       ), 'expired', 'pending_ttl', 'window_ended')`,
      [ttlMinutes, batch],
    );
  }
}
