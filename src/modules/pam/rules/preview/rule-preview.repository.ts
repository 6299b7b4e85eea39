import { Injectable } from '@nestjs/common';
import { DbService } from '../../../../infra/database/db.service';
import type { SqlRuleInput } from '../engine/rule-sql.util';
import type { FlowType } from '../engine/rule.types';
import type { BucketRow, Slice } from './preview-plan.util';
import { previewMatchSql } from './preview-sql.util';

/** The requests a preview scans: one organization's window, optionally one flow type, optionally some sites. */
export interface ScanScope {
  orgId: string;
  windowStart: Date;
  asOf: Date;
  flowType: FlowType | null;
  /** null: every site. */
  siteIds: readonly string[] | null;
}

export interface PartialBucket {
  rows: { status: string; scanned: number; matched: number }[];
  /** The oldest request kept: requests at or after it, in (requested_at, id) order, are in. */
  cut: { at: string; id: string } | null;
}

export interface SampleRow {
  id: string;
  requested_at: Date;
  flow_type: FlowType;
  status: string;
}

/**
 * Hour buckets, written exactly as in the extended statistics of the migration
 * (elevation_requests_hour_stats), so the planner knows how many groups an aggregate by
 * hour yields and chooses a parallel partial aggregate.
 */
const HOUR_BUCKET = `date_bin('1 hour', er.requested_at, TIMESTAMPTZ '1970-01-01 00:00:00+00')`;

function scopeWhere(s: ScanScope, params: unknown[]): string {
  const p = (value: unknown, type: string) => `$${params.push(value)}::${type}`;
  const parts = [
    `er.org_id = ${p(s.orgId, 'uuid')}`,
    `er.requested_at >= ${p(s.windowStart, 'timestamptz')}`,
    `er.requested_at <= ${p(s.asOf, 'timestamptz')}`,
  ];
  if (s.flowType) parts.push(`er.flow_type = ${p(s.flowType, 'text')}`);
  if (s.siteIds) parts.push(`er.site_id = ANY(${p(s.siteIds, 'uuid[]')})`);
  return parts.join(' AND ');
}

/**
 * The preview's queries over elevation_requests. The match is pushed into SQL
 * (`previewMatchSql`, the twin of the engine's `matchesRule`), so only counts and at most
 * twenty sample rows travel to Node.
 */
@Injectable()
export class RulePreviewRepository {
  constructor(private readonly db: DbService) {}

  async now(): Promise<Date> {
    return (await this.db.one<{ now: Date }>(`SELECT now() AS now`))!.now;
  }

  /** Requests scanned and matched per hour bucket and status within one slice of the window. */
  bucketCounts(scope: ScanScope, criteria: SqlRuleInput, slice: Slice): Promise<BucketRow[]> {
    const params: unknown[] = [];
    const where = scopeWhere(scope, params);
    const from = `$${params.push(slice.from)}::timestamptz`;
    const to = slice.to ? ` AND er.requested_at < $${params.push(slice.to)}::timestamptz` : '';
    const match = previewMatchSql(criteria, 'er', params);
    return this.db.rows<BucketRow>(
      `SELECT ${HOUR_BUCKET} AS bucket, er.status, count(*)::int AS scanned, (count(*) FILTER (WHERE ${match}))::int AS matched
         FROM elevation_requests er
        WHERE ${where} AND er.requested_at >= ${from}${to}
        GROUP BY 1, 2`,
      params,
    );
  }

  /** The newest `keep` requests of one hour bucket: their counts, and the oldest of them as the cut. */
  async partialBucket(scope: ScanScope, criteria: SqlRuleInput, bucketStart: Date, keep: number): Promise<PartialBucket> {
    const params: unknown[] = [];
    const where = scopeWhere(scope, params);
    const start = `$${params.push(bucketStart)}::timestamptz`;
    const limit = `$${params.push(keep)}::int`;
    const match = previewMatchSql(criteria, 'er', params);
    const rows = await this.db.rows<{ status: string; scanned: number; matched: number; cut_at: string; cut_id: string }>(
      `WITH kept AS MATERIALIZED (
         SELECT er.requested_at, er.id, er.status, ${match} AS m
           FROM elevation_requests er
          WHERE ${where} AND er.requested_at >= ${start} AND er.requested_at < ${start} + interval '1 hour'
          ORDER BY er.requested_at DESC, er.id DESC
          LIMIT ${limit}
       ), cut AS (SELECT requested_at, id FROM kept ORDER BY requested_at, id LIMIT 1)
       SELECT k.status, count(*)::int AS scanned, (count(*) FILTER (WHERE k.m))::int AS matched,
              to_char(c.requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cut_at, c.id AS cut_id
         FROM kept k CROSS JOIN cut c
        GROUP BY k.status, c.requested_at, c.id`,
      params,
    );
    return {
      rows: rows.map(({ status, scanned, matched }) => ({ status, scanned, matched })),
      cut: rows.length > 0 ? { at: rows[0].cut_at, id: rows[0].cut_id } : null,
    };
  }

  /**
   * The newest matches within the given hour buckets (and at or after the cut), newest first.
   * One LATERAL probe per bucket, so each is an index range scan of one hour of one
   * organization: joined instead, the planner cannot see how few rows an hour holds and scans
   * the whole window, evaluating the match on every row.
   */
  sample(scope: ScanScope, criteria: SqlRuleInput, bucketStarts: readonly Date[], cut: PartialBucket['cut'], size: number): Promise<SampleRow[]> {
    if (bucketStarts.length === 0) return Promise.resolve([]);
    const params: unknown[] = [];
    const buckets = `$${params.push(bucketStarts)}::timestamptz[]`;
    const where = scopeWhere(scope, params);
    const after = cut ? ` AND (er.requested_at, er.id) >= ($${params.push(cut.at)}::timestamptz, $${params.push(cut.id)}::uuid)` : '';
    const limit = `$${params.push(size)}::int`;
    const match = previewMatchSql(criteria, 'er', params);
    return this.db.rows<SampleRow>(
      `SELECT s.id, s.requested_at, s.flow_type, s.status
         FROM unnest(${buckets}) AS b(start)
         CROSS JOIN LATERAL (
           SELECT er.id, er.requested_at, er.flow_type, er.status
             FROM elevation_requests er
            WHERE ${where} AND er.requested_at >= b.start AND er.requested_at < b.start + interval '1 hour'${after} AND ${match}
            ORDER BY er.requested_at DESC, er.id DESC
            LIMIT ${limit}
         ) s
        ORDER BY s.requested_at DESC, s.id DESC
        LIMIT ${limit}`,
      params,
    );
  }
}
