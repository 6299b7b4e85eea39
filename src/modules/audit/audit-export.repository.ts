import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../infra/database/db.service';
import { isoMicros, type AuditPosition } from './audit-cursor.util';

/**
 * How far the export may read right now, in microseconds: the database's clock less the settle
 * window, and never as far as the start of the oldest transaction of this database that has
 * written and not yet ended. A row's created_at is the moment it was written (clock_timestamp()),
 * never before its transaction began, so every row at or before this bound that will ever commit
 * has committed: a reader that moves its cursor past the bound skips nothing. pg_stat_activity
 * shows those transactions for sessions of the request role itself (the service's, behind a pooler
 * too); the settle window covers the rest (docs/api-conventions.md, "Exporting the audit log").
 */
const SETTLED = prepared(
  'audit_export_settled',
  `SELECT (extract(epoch FROM LEAST(
            clock_timestamp() - make_interval(secs => $1),
            (SELECT min(xact_start) FROM pg_stat_activity
              WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()) - interval '1 microsecond'
          )) * 1000000)::int8 AS settled_us`,
);

/**
 * The next events after a position, in (created_at, id) order, up to an instant. Row-level
 * security alone decides whose events these are, as for GET /audit-logs. The order is served by
 * audit_logs_time_idx (migration 1763702500000) for every caller, and, with an organization
 * named, by that organization's audit_logs_org_time_idx read backwards.
 */
const AFTER = prepared(
  'audit_export_after',
  `SELECT id, org_id, partner_id, actor_type, actor_id, actor_user_id, action, resource_type, resource_id, details, ip, request_id, created_at,
          (extract(epoch FROM created_at) * 1000000)::int8 AS created_us
     FROM audit_logs
    WHERE (created_at, id) > ($1::timestamptz, $2::uuid) AND created_at <= $3::timestamptz
    ORDER BY created_at, id
    LIMIT $4`,
);

const AFTER_IN_ORG = prepared(
  'audit_export_after_in_org',
  `SELECT id, org_id, partner_id, actor_type, actor_id, actor_user_id, action, resource_type, resource_id, details, ip, request_id, created_at,
          (extract(epoch FROM created_at) * 1000000)::int8 AS created_us
     FROM audit_logs
    WHERE org_id = $5 AND (created_at, id) > ($1::timestamptz, $2::uuid) AND created_at <= $3::timestamptz
    ORDER BY created_at, id
    LIMIT $4`,
);

export type AuditExportRow = Record<string, unknown> & { id: string; created_us: string };

/** The audit export's reads: each is one statement, run by the service in a statement-wise context of its own. */
@Injectable()
export class AuditExportRepository {
  constructor(private readonly db: DbService) {}

  async settledMicros(settleSeconds: number): Promise<bigint> {
    const row = await this.db.one<{ settled_us: string }>(SETTLED, [settleSeconds]);
    return BigInt(row!.settled_us);
  }

  /** At most `limit` events strictly after `after` and at or before `untilUs`, of one organization when `orgId` is given. */
  batch(after: AuditPosition, untilUs: bigint, limit: number, orgId: string | null): Promise<AuditExportRow[]> {
    const params = [isoMicros(after.us), after.id, isoMicros(untilUs), limit];
    return orgId ? this.db.rows<AuditExportRow>(AFTER_IN_ORG, [...params, orgId]) : this.db.rows<AuditExportRow>(AFTER, params);
  }
}
