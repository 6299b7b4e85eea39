import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { FlowType } from '../rules/engine/rule.types';

export interface FlowDevice {
  id: string;
  org_id: string;
  site_id: string;
  status: string;
  /** The database clock of this transaction: the decision time and the request's requestedAt. */
  now: Date;
}

export interface NewFlowRequest {
  orgId: string;
  siteId: string;
  deviceId: string;
  flowType: Exclude<FlowType, 'uac_intercept'>;
  status: 'pending' | 'auto_approved' | 'denied';
  subjectUsername: string;
  subjectUserId: string | null;
  reason: string | null;
  toolName: string | null;
  toolAction: string | null;
  riskTier: number | null;
  actionDigest: string | null;
  /** Requested window (JIT), or the granted one when auto-approved. */
  durationMinutes: number | null;
  decisionSource: string | null;
  matchedPolicyId: string | null;
  matchedPolicyName: string | null;
  pamRuleId: string | null;
  pamRuleName: string | null;
}

@Injectable()
export class FlowRepository {
  constructor(private readonly db: DbService) {}

  device(id: string): Promise<FlowDevice | null> {
    return this.db.one<FlowDevice>(`SELECT id, org_id, site_id, status, now() AS now FROM devices WHERE id = $1`, [id]);
  }

  /** How the caller is named on the request: a user's email, else the API key's name. */
  async subjectName(userId: string | null, apiKeyId: string | null): Promise<string | null> {
    const row = await this.db.one<{ name: string | null }>(
      `SELECT coalesce((SELECT email FROM users WHERE id = $1::uuid), (SELECT 'API key ' || name FROM api_keys WHERE id = $2::uuid)) AS name`,
      [userId, apiKeyId],
    );
    return row?.name ?? null;
  }

  /** requested_at, decided_at and expires_at all come from the transaction's clock. */
  async insert(r: NewFlowRequest): Promise<{ id: string; expires_at: Date | null }> {
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
        r.durationMinutes,
        r.decisionSource,
        r.matchedPolicyId,
        r.matchedPolicyName,
        r.pamRuleId,
        r.pamRuleName,
      ],
    );
    return row!;
  }
}
