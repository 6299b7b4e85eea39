import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import type { AgentIntakeLog, CreatedElevationRequest, FiledElevationRequest, NewElevationRequest, ObservedElevationRequest, RateBucket } from './elevation-intake.types';

/** What the decision chain settled, in the order both statements take it. */
const decided = (r: NewElevationRequest) => [r.durationMinutes, r.decisionSource, r.matchedPolicyId, r.matchedPolicyName, r.pamRuleId, r.pamRuleName];

/**
 * The request, its audit row and its `created` event in one statement (app_ingest_insert,
 * migration 1763700800000, a PL/pgSQL function whose plans the server keeps). With the device's
 * rate-limit bucket spent first when the bucket lives in the database (nothing is written when
 * it is empty), or without.
 */
const INSERT = prepared(
  'ingest_insert',
  `SELECT id, requested_at, expires_at
     FROM app_ingest_insert($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                            $21, $22, $23, $24, $25, $26, $27, $28, $29)`,
);

/**
 * Creates elevation requests: the one place a new row of elevation_requests is inserted. Agent
 * ingest's row goes with its audit row and `created` event in one statement (the service's hot
 * path); a filed request's row alone, its audit row and event written by their services.
 */
@Injectable()
export class ElevationIntakeRepository {
  constructor(private readonly db: DbService) {}

  /**
   * requested_at is the transaction's clock; an auto-approval's window starts there too. With a
   * bucket, nothing is written (null) when it is empty.
   */
  insertObserved(r: ObservedElevationRequest, log: AgentIntakeLog, bucket: RateBucket | null): Promise<CreatedElevationRequest | null> {
    return this.db.one<CreatedElevationRequest>(INSERT, [
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
      r.status !== 'pending',
      ...decided(r),
      r.softwareEvidence.length ? JSON.stringify(r.softwareEvidence) : null,
      log.agentId,
      log.auditAction,
      JSON.stringify(log.details),
      log.ip,
      log.requestId,
      bucket !== null,
      bucket?.burst ?? null,
      bucket?.ratePerSecond ?? null,
    ]);
  }

  /** requested_at, decided_at and expires_at all come from the transaction's clock; a window only for an auto-approval. */
  async insertFiled(r: FiledElevationRequest): Promise<{ id: string; expires_at: Date | null }> {
    const row = await this.db.one<{ id: string; expires_at: Date | null }>(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, subject_user_id, reason,
                                       tool_name, tool_action, risk_tier, action_digest, duration_minutes, decision_source,
                                       matched_policy_id, matched_policy_name, pam_rule_id, pam_rule_name,
                                       requested_at, decided_at, expires_at)
       VALUES ($1, $2, $3, $4, $5::varchar, $6, $7, $8, $9, $10, $11, $12, $13::int, $14, $15, $16, $17, $18, now(),
               CASE WHEN $5::varchar <> 'pending' THEN now() END,
               CASE WHEN $5::varchar = 'auto_approved' THEN now() + make_interval(mins => $13::int) END)
       RETURNING id, expires_at`,
      [
        r.orgId,
        r.siteId,
        r.deviceId,
        r.flowType,
        r.status,
        r.subjectUsername,
        r.subjectUserId,
        r.reason,
        r.toolName,
        r.toolAction,
        r.riskTier,
        r.actionDigest,
        ...decided(r),
      ],
    );
    return row!;
  }
}
