import type { FlowType } from '../rules/engine/rule.types';

export const ELEVATION_STATUSES = ['pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating'] as const;
export type ElevationStatus = (typeof ELEVATION_STATUSES)[number];

/** Statuses of an elevation in force until its expiresAt (GET /pam/active, revoke). */
export const ACTIVE_STATUSES = ['approved', 'auto_approved', 'actuating'] as const satisfies readonly ElevationStatus[];

/** The kinds of rows in pam_elevation_events (one per decision or transition). */
export const PAM_EVENT_TYPES = [
  'created',
  'approved',
  'denied',
  'revoked',
  'expired',
  'actuation_claimed',
  'actuation_completed',
  'actuation_failed',
] as const;
export type PamEventType = (typeof PAM_EVENT_TYPES)[number];

export type DecisionSource = 'software_policy' | 'pam_rule' | 'human';

/** The stored columns of one elevation request that the lifecycle reads. */
export interface ElevationRequestRow {
  id: string;
  org_id: string;
  site_id: string;
  device_id: string;
  flow_type: FlowType;
  /** Stored status. */
  status: ElevationStatus;
  /** Stored status with deadlines applied: what the request is now, even before the sweeper ran. */
  effective_status: ElevationStatus;
  subject_username: string | null;
  subject_user_id: string | null;
  target_executable_path: string | null;
  target_executable_signer: string | null;
  /** ISO 8601 in UTC, as the API writes it (isoTimestamp). */
  requested_at: string;
  /** ISO 8601 in UTC, as the API writes it. */
  expires_at: string | null;
  decision_source: string | null;
  matched_policy_id: string | null;
  matched_policy_name: string | null;
  pam_rule_id: string | null;
  pam_rule_name: string | null;
  approved_by: string | null;
  denied_by: string | null;
  approved_by_name: string | null;
  denied_by_name: string | null;
  revoked_by_name: string | null;
  tool_name: string | null;
  risk_tier: number | null;
  action_digest: string | null;
  /** ISO 8601 in UTC, as the API writes it. */
  actuated_at: string | null;
}

/** A list row: the request with its device and site names. */
export interface ElevationRequestListRow extends ElevationRequestRow {
  device_hostname: string | null;
  site_name: string | null;
}
