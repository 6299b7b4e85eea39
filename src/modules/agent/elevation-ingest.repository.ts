import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../infra/database/db.service';
import type { SoftwareSettings } from '../policies/features/pam.features';
import { AppliedPolicyRow, toAppliedPolicy } from '../policies/resolution/policy-resolution.repository';
import { closestFirst } from '../policies/resolution/policy-resolution.util';
import { ORG_PAM_DEFAULTS, type AppliedSoftwarePolicy, type OrgPamDefaults, type SoftwareEvidence } from '../pam/decision/decision.types';
import { INGEST_BURST, INGEST_RATE_PER_SECOND } from './rate-limit/device-rate-limiter';

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

/**
 * Both statements are PL/pgSQL functions (migration 1763700800000): their plans stay cached on
 * the server connection, which survives a transaction pooler; each call is one round trip.
 */
const INGEST_CONTEXT = prepared(
  'ingest_context',
  `SELECT status, site_id, now, rules_version, default_unmatched_verdict, default_approval_duration_minutes, software
     FROM app_ingest_context($1, $2)`,
);

/**
 * The request, its audit row and its `created` event in one statement. With the device's
 * rate-limit bucket spent first when the bucket lives in the database (nothing is written when
 * it is empty), or without.
 */
const INSERT = prepared(
  'ingest_insert',
  `SELECT id, requested_at, expires_at
     FROM app_ingest_insert($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                            $21, $22, $23, $24, $25, $26, $27, $28, $29)`,
);

@Injectable()
export class ElevationIngestRepository {
  constructor(private readonly db: DbService) {}

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
      INSERT,
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
        spendToken,
        INGEST_BURST,
        INGEST_RATE_PER_SECOND,
      ],
    );
  }
}
