import { riskTierStatus } from './engine/risk-tier.registry';
import type { PamRuleDefinition, PamTimeWindow } from './engine/rule.types';
import type { PamRuleDto } from './pam-rule.dto';
import type { PamRuleRow, PamRuleWrite } from './pam-rule.repository';

/** A stored rule as the engine reads it. */
export function toRuleDefinition(r: PamRuleRow): PamRuleDefinition {
  return { ...toRuleWrite(r), id: r.id, createdAt: r.created_at };
}

/** The writable columns of a stored rule, the starting point of a merge. */
export function toRuleWrite(r: PamRuleRow): PamRuleWrite {
  return {
    siteId: r.site_id,
    name: r.name,
    verdict: r.verdict,
    priority: r.priority,
    enabled: r.enabled,
    matchSigner: r.match_signer,
    matchSignerGroupId: r.match_signer_group_id,
    matchHash: r.match_hash,
    matchPathGlob: r.match_path_glob,
    matchParentImage: r.match_parent_image,
    matchCommandLine: r.match_command_line,
    matchUser: r.match_user,
    matchAdGroup: r.match_ad_group,
    matchToolName: r.match_tool_name,
    matchRiskTier: r.match_risk_tier,
    matchNegate: r.match_negate,
    timeWindow: r.time_window,
    approvalDurationMinutes: r.approval_duration_minutes,
  };
}

function windowOut(w: PamTimeWindow | null): PamRuleDto['timeWindow'] {
  if (!w) return null;
  return { start: w.start, end: w.end, days: w.days ?? null, timezone: w.timezone ?? null };
}

export function toRuleDto(r: PamRuleRow): PamRuleDto {
  const tier = riskTierStatus({ matchToolName: r.match_tool_name, matchRiskTier: r.match_risk_tier, matchNegate: r.match_negate });
  return {
    id: r.id,
    orgId: r.org_id,
    ...toRuleWrite(r),
    timeWindow: windowOut(r.time_window),
    matchRiskTierStale: tier.stale,
    matchRiskTierValidTiers: tier.validTiers,
    createdBy: r.created_by,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}
