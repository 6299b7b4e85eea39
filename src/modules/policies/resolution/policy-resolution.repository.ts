import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import type { TargetType } from '../policy.dto';
import type { AppliedPolicy } from './policy-resolution.util';

export interface AppliedPolicyRow {
  policy_id: string;
  policy_name: string;
  policy_updated_at: Date;
  level: TargetType;
  priority: number;
  assigned_at: Date;
  assignment_id: string;
  settings: unknown;
}

/** Where a policy can reach: a device, with the site and organization it belongs to. */
export interface PolicyTarget {
  orgId: string;
  siteId: string;
  deviceId: string;
}

/**
 * Every assignment through which an enabled configuration policy carrying the feature reaches one
 * device: partner-wide, its organization, its site, any of its device groups (static or dynamic
 * members alike), or the device itself. A PL/pgSQL function (migration 1763700800000), so that
 * agent ingest reads the same definition inside its context statement and the plan stays cached
 * on the server connection.
 */
const APPLIED_POLICIES = prepared('policies_applied', `SELECT * FROM app_applied_policies($1, $2, $3, $4)`);

export function toAppliedPolicy<S>(r: AppliedPolicyRow): AppliedPolicy<S> {
  return {
    policyId: r.policy_id,
    policyName: r.policy_name,
    policyUpdatedAt: new Date(r.policy_updated_at),
    level: r.level,
    priority: r.priority,
    assignedAt: new Date(r.assigned_at),
    assignmentId: r.assignment_id,
    settings: r.settings as S,
  };
}

@Injectable()
export class PolicyResolutionRepository {
  constructor(private readonly db: DbService) {}

  /** The device's assignments of policies carrying `feature`; the caller orders them (closestFirst). */
  async applied<S>(target: PolicyTarget, feature: string): Promise<AppliedPolicy<S>[]> {
    const rows = await this.db.rows<AppliedPolicyRow>(APPLIED_POLICIES, [target.orgId, target.siteId, target.deviceId, feature]);
    return rows.map((r) => toAppliedPolicy<S>(r));
  }
}
