import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import type { NegatableKey, PamRuleDefinition, PamTimeWindow, PamVerdict } from '../rules/engine/rule.types';
import { ORG_PAM_DEFAULTS, OrgPamDefaults } from './decision.types';

interface RuleRow {
  id: string;
  name: string;
  verdict: PamVerdict;
  priority: number;
  enabled: boolean;
  site_id: string | null;
  approval_duration_minutes: number | null;
  created_at: Date;
  match_signer: string | null;
  match_signer_group_id: string | null;
  match_hash: string | null;
  match_path_glob: string | null;
  match_parent_image: string | null;
  match_command_line: string | null;
  match_user: string | null;
  match_ad_group: string | null;
  match_tool_name: string | null;
  match_risk_tier: number | null;
  match_negate: NegatableKey[] | null;
  time_window: PamTimeWindow | null;
}

export function toRuleDefinition(r: RuleRow): PamRuleDefinition {
  return {
    id: r.id,
    name: r.name,
    verdict: r.verdict,
    priority: r.priority,
    enabled: r.enabled,
    siteId: r.site_id,
    approvalDurationMinutes: r.approval_duration_minutes,
    createdAt: new Date(r.created_at),
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
  };
}

/** What the decision chain reads about an organization, in the caller's transaction. */
@Injectable()
export class DecisionRepository {
  constructor(private readonly db: Db) {}

  async orgDefaults(orgId: string): Promise<OrgPamDefaults> {
    const row = await this.db.one<{ default_unmatched_verdict: OrgPamDefaults['defaultUnmatchedVerdict']; default_approval_duration_minutes: number }>(
      `SELECT default_unmatched_verdict, default_approval_duration_minutes FROM pam_org_config WHERE org_id = $1`,
      [orgId],
    );
    return row ? { defaultUnmatchedVerdict: row.default_unmatched_verdict, defaultApprovalDurationMinutes: row.default_approval_duration_minutes } : ORG_PAM_DEFAULTS;
  }

  async rulesVersion(orgId: string): Promise<number> {
    const row = await this.db.one<{ version: string }>(`SELECT version FROM pam_rules_versions WHERE org_id = $1`, [orgId]);
    return row ? Number(row.version) : 0;
  }

  /** Enabled rules and the signer groups they reference, read in one statement so both come from one snapshot. */
  async ruleSetSource(orgId: string): Promise<{ rules: PamRuleDefinition[]; signerGroups: Map<string, string[]> }> {
    const row = await this.db.one<{ rules: RuleRow[] | null; groups: { id: string; signers: string[] }[] | null }>(
      `SELECT (SELECT json_agg(r) FROM pam_rules r WHERE r.org_id = $1 AND r.enabled) AS rules,
              (SELECT json_agg(json_build_object('id', g.id, 'signers', g.signers)) FROM pam_signer_groups g
                WHERE g.org_id = $1 AND g.id IN (SELECT match_signer_group_id FROM pam_rules WHERE org_id = $1 AND enabled)) AS groups`,
      [orgId],
    );
    return {
      rules: (row?.rules ?? []).map(toRuleDefinition),
      signerGroups: new Map((row?.groups ?? []).map((g) => [g.id, g.signers])),
    };
  }
}
