import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
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
 * Every assignment through which an enabled configuration policy carrying `feature` reaches one
 * device: partner-wide, its organization, its site, any of its device groups (static or dynamic
 * members alike), or the device itself. Placeholders name the parameters holding the organization,
 * site, device and feature, so that a caller can embed the query in a larger statement.
 */
export function appliedPoliciesSql(org: string, site: string, device: string, feature: string): string {
  return `SELECT p.id AS policy_id, p.name AS policy_name, p.updated_at AS policy_updated_at, a.target_level AS level, a.priority,
                 a.created_at AS assigned_at, a.id AS assignment_id, p.features -> ${feature}::text AS settings
            FROM policy_assignments a
            JOIN policies p ON p.id = a.policy_id
           WHERE p.enabled AND p.type = 'configuration' AND p.features ? ${feature}::text
             AND ((a.target_level = 'partner' AND a.org_id IS NULL
                   AND a.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = ${org}::uuid))
               OR (a.org_id = ${org}::uuid
                   AND (a.target_level = 'organization'
                     OR (a.target_level = 'site' AND a.site_id = ${site}::uuid)
                     OR (a.target_level = 'device' AND a.device_id = ${device}::uuid)
                     OR (a.target_level = 'device_group' AND a.device_group_id IN (
                           SELECT m.group_id FROM device_group_members m WHERE m.org_id = ${org}::uuid AND m.device_id = ${device}::uuid)))))`;
}

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
  constructor(private readonly db: Db) {}

  /** The device's assignments of policies carrying `feature`; the caller orders them (closestFirst). */
  async applied<S>(target: PolicyTarget, feature: string): Promise<AppliedPolicy<S>[]> {
    const rows = await this.db.rows<AppliedPolicyRow>(appliedPoliciesSql('$1', '$2', '$3', '$4'), [target.orgId, target.siteId, target.deviceId, feature]);
    return rows.map((r) => toAppliedPolicy<S>(r));
  }
}
