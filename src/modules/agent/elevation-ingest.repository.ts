import { Injectable } from '@nestjs/common';
import { Db, prepared } from '../../infra/database/db.service';
import type { SoftwareSettings } from '../policies/features/pam.features';
import { appliedPoliciesSql, AppliedPolicyRow, toAppliedPolicy } from '../policies/resolution/policy-resolution.repository';
import { closestFirst } from '../policies/resolution/policy-resolution.util';
import { ORG_PAM_DEFAULTS, type AppliedSoftwarePolicy, type OrgPamDefaults, type SoftwareEvidence } from '../pam/decision/decision.types';
import { bucketTakeSql } from './rate-limit/postgres-rate-limiter.service';

/** Everything ingest needs to know before deciding, read in one statement. */
export interface IngestContext {
  deviceStatus: 'active' | 'decommissioned';
  siteId: string;
  /** The transaction's clock: the request time and every time window go by it. */
  now: Date;
  /** The organization's rules version, read here so the compiled-rule cache needs no query of its own. */
  rulesVersion: string;
  defaults: OrgPamDefaults;
  software: AppliedSoftwarePolicy[];
}

export interface NewElevationRequest {
  orgId: string;
  siteId: string;
  deviceId: string;
  status: 'pending' | 'auto_approved' | 'denied';
  subjectUsername: string;
  targetExecutablePath: string;
  targetExecutableHash: string;
  targetExecutableSigner: string | null;
  parentImage: string | null;
  commandLine: string | null;
  pid: number | null;
  observedAt: string | null;
  reason: string;
  /** Only for an outcome the chain made final (auto_approved, denied). */
  decisionSource: 'software_policy' | 'pam_rule' | 'org_default' | null;
  durationMinutes: number | null;
  matchedPolicyId: string | null;
  matchedPolicyName: string | null;
  pamRuleId: string | null;
  pamRuleName: string | null;
  softwareEvidence: SoftwareEvidence[];
}

/** The audit row and the `created` event written with the request (same details in both; never secrets). */
export interface IngestLog {
  agentId: string;
  auditAction: string;
  details: Record<string, unknown>;
  requestId: string | null;
  ip: string | null;
}

export interface CreatedElevationRequest {
  id: string;
  requested_at: Date;
  expires_at: Date | null;
}

const INGEST_CONTEXT = prepared(
  'ingest_context',
  `SELECT d.status, d.site_id, now() AS now,
          coalesce((SELECT v.version::text FROM pam_rules_versions v WHERE v.org_id = d.org_id), '0') AS rules_version,
          c.default_unmatched_verdict, c.default_approval_duration_minutes,
          (SELECT coalesce(json_agg(s), '[]') FROM (${appliedPoliciesSql('$1', 'd.site_id', '$2', "'software'")}) s) AS software
     FROM devices d
     LEFT JOIN pam_org_config c ON c.org_id = d.org_id
    WHERE d.org_id = $1 AND d.id = $2`,
);

/**
 * The request, its audit row and its `created` event in one statement. With the device's
 * rate-limit bucket spent first when the bucket lives in the database (nothing is written when
 * it is empty), or without.
 */
function insertSql(bucket: string): string {
  return `WITH bucket AS (${bucket}), req AS (
         INSERT INTO elevation_requests (
           org_id, site_id, device_id, flow_type, status, subject_username, target_executable_path, target_executable_hash,
           target_executable_signer, parent_image, command_line, pid, observed_at, reason, requested_at, decided_at,
           duration_minutes, expires_at, decision_source, matched_policy_id, matched_policy_name, pam_rule_id, pam_rule_name, software_evidence)
         SELECT $1, $2, $3, 'uac_intercept', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now(), CASE WHEN $14 THEN now() END,
                $15::int, now() + make_interval(mins => $15::int), $16, $17, $18, $19, $20, $21::jsonb
          WHERE EXISTS (SELECT 1 FROM bucket)
         RETURNING id, org_id, status, requested_at, expires_at
       ), audit AS (
         INSERT INTO audit_logs (org_id, actor_type, actor_id, action, resource_type, resource_id, details, ip, request_id)
         SELECT org_id, 'agent', $22, $23, 'elevation_request', id::text, $24::jsonb, $25, $26 FROM req
       ), event AS (
         INSERT INTO pam_elevation_events (org_id, elevation_request_id, type, from_status, to_status, actor_type, actor_id, details)
         SELECT org_id, id, 'created', NULL, status, 'agent', $22, $24::jsonb FROM req
       )
       SELECT id, requested_at, expires_at FROM req`;
}
const INSERT_SPENDING_TOKEN = prepared('ingest_insert_spending_token', insertSql(bucketTakeSql('$1::uuid', '$3::uuid')));
const INSERT_WITHOUT_TOKEN = prepared('ingest_insert', insertSql('SELECT 1'));

@Injectable()
export class ElevationIngestRepository {
  constructor(private readonly db: Db) {}

  async context(orgId: string, deviceId: string): Promise<IngestContext | null> {
    const row = await this.db.one<{
      status: 'active' | 'decommissioned';
      site_id: string;
      now: Date;
      rules_version: string;
      default_unmatched_verdict: OrgPamDefaults['defaultUnmatchedVerdict'] | null;
      default_approval_duration_minutes: number | null;
      software: AppliedPolicyRow[];
    }>(INGEST_CONTEXT, [orgId, deviceId]);
    if (!row) return null;
    return {
      deviceStatus: row.status,
      siteId: row.site_id,
      rulesVersion: row.rules_version,
      now: new Date(row.now),
      defaults: row.default_unmatched_verdict
        ? { defaultUnmatchedVerdict: row.default_unmatched_verdict, defaultApprovalDurationMinutes: row.default_approval_duration_minutes ?? 15 }
        : ORG_PAM_DEFAULTS,
      software: closestFirst(row.software.map((r) => toAppliedPolicy<SoftwareSettings>(r))),
    };
  }

  /**
   * The request, its audit row and its `created` event in one statement: ingest is the hot path
   * of the service and every round trip counts. With `spendToken`, the device's rate-limit bucket
   * is spent in the same statement, and nothing is written (null) when it is empty.
   * requested_at is the transaction's clock; an auto-approval's window starts there too.
   */
  async insert(r: NewElevationRequest, log: IngestLog, spendToken: boolean): Promise<CreatedElevationRequest | null> {
    const final = r.status !== 'pending';
    return this.db.one<CreatedElevationRequest>(
      spendToken ? INSERT_SPENDING_TOKEN : INSERT_WITHOUT_TOKEN,
      [
        r.orgId,
        r.siteId,
        r.deviceId,
        r.status,
        r.subjectUsername,
        r.targetExecutablePath,
        r.targetExecutableHash,
        r.targetExecutableSigner,
        r.parentImage,
        r.commandLine,
        r.pid,
        r.observedAt,
        r.reason,
        final,
        r.durationMinutes,
        r.decisionSource,
        r.matchedPolicyId,
        r.matchedPolicyName,
        r.pamRuleId,
        r.pamRuleName,
        r.softwareEvidence.length ? JSON.stringify(r.softwareEvidence) : null,
        log.agentId,
        log.auditAction,
        JSON.stringify(log.details),
        log.ip,
        log.requestId,
      ],
    );
  }
}
