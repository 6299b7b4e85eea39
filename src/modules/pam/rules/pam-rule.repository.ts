import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import type { NegatableKey, PamTimeWindow, PamVerdict } from './engine/rule.types';

export interface PamRuleRow {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  verdict: PamVerdict;
  priority: number;
  enabled: boolean;
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
  approval_duration_minutes: number | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The stored columns of a rule, as written by create and update. */
export interface PamRuleWrite {
  siteId: string | null;
  name: string;
  verdict: PamVerdict;
  priority: number;
  enabled: boolean;
  matchSigner: string | null;
  matchSignerGroupId: string | null;
  matchHash: string | null;
  matchPathGlob: string | null;
  matchParentImage: string | null;
  matchCommandLine: string | null;
  matchUser: string | null;
  matchAdGroup: string | null;
  matchToolName: string | null;
  matchRiskTier: number | null;
  matchNegate: NegatableKey[] | null;
  timeWindow: PamTimeWindow | null;
  approvalDurationMinutes: number | null;
}

const COLUMNS = [
  'site_id',
  'name',
  'verdict',
  'priority',
  'enabled',
  'match_signer',
  'match_signer_group_id',
  'match_hash',
  'match_path_glob',
  'match_parent_image',
  'match_command_line',
  'match_user',
  'match_ad_group',
  'match_tool_name',
  'match_risk_tier',
  'match_negate',
  'time_window',
] as const;

function values(w: PamRuleWrite): unknown[] {
  return [
    w.siteId,
    w.name,
    w.verdict,
    w.priority,
    w.enabled,
    w.matchSigner,
    w.matchSignerGroupId,
    w.matchHash,
    w.matchPathGlob,
    w.matchParentImage,
    w.matchCommandLine,
    w.matchUser,
    w.matchAdGroup,
    w.matchToolName,
    w.matchRiskTier,
    w.matchNegate,
    w.timeWindow === null ? null : JSON.stringify(w.timeWindow),
    w.approvalDurationMinutes,
  ];
}

const ORDER = 'ORDER BY org_id, priority, created_at, id';

const LIST_OF = prepared('pam_rules_list_of', `SELECT * FROM pam_rules WHERE org_id = ANY($1::uuid[]) ${ORDER}`);

@Injectable()
export class PamRuleRepository {
  constructor(private readonly db: DbService) {}

  /** Every rule of these organizations the transaction can see, in evaluation order per organization. */
  listOf(orgIds: readonly string[]): Promise<PamRuleRow[]> {
    return this.db.rows<PamRuleRow>(LIST_OF, [orgIds]);
  }

  /**
   * Enabled rules of one organization and the signer lists of the groups they reference, for
   * compiling: one statement, so both come from one snapshot even while rules change.
   */
  async compileSource(orgId: string): Promise<{ rules: PamRuleRow[]; groups: { id: string; signers: string[] }[] }> {
    const row = await this.db.one<{ rules: (Omit<PamRuleRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string })[] | null; groups: { id: string; signers: string[] }[] | null }>(
      `SELECT (SELECT json_agg(r) FROM pam_rules r WHERE r.org_id = $1 AND r.enabled) AS rules,
              (SELECT json_agg(json_build_object('id', g.id, 'signers', g.signers)) FROM pam_signer_groups g
                WHERE g.org_id = $1
                  AND g.id IN (SELECT match_signer_group_id FROM pam_rules WHERE org_id = $1 AND enabled)) AS groups`,
      [orgId],
    );
    const rules = (row?.rules ?? []).map((r) => ({ ...r, created_at: new Date(r.created_at), updated_at: new Date(r.updated_at) }));
    return { rules, groups: row?.groups ?? [] };
  }

  /** Enabled rules pinned to a risk tier, across every organization the transaction sees. */
  enabledTierPinned(): Promise<PamRuleRow[]> {
    return this.db.rows<PamRuleRow>(`SELECT * FROM pam_rules WHERE enabled AND match_risk_tier IS NOT NULL ${ORDER}`);
  }

  find(id: string): Promise<PamRuleRow | null> {
    return this.db.one<PamRuleRow>(`SELECT * FROM pam_rules WHERE id = $1`, [id]);
  }

  async insert(orgId: string, createdBy: string | null, w: PamRuleWrite): Promise<PamRuleRow> {
    const placeholders = [...COLUMNS, 'approval_duration_minutes'].map((_, i) => `$${i + 3}`).join(', ');
    const row = await this.db.one<PamRuleRow>(
      `INSERT INTO pam_rules (org_id, created_by, ${COLUMNS.join(', ')}, approval_duration_minutes)
       VALUES ($1, $2, ${placeholders}) RETURNING *`,
      [orgId, createdBy, ...values(w)],
    );
    return row!;
  }

  async update(id: string, w: PamRuleWrite): Promise<PamRuleRow> {
    const assignments = [...COLUMNS, 'approval_duration_minutes'].map((column, i) => `${column} = $${i + 2}`).join(', ');
    const row = await this.db.one<PamRuleRow>(
      `UPDATE pam_rules SET ${assignments}, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, ...values(w)],
    );
    return row!;
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM pam_rules WHERE id = $1`, [id]);
  }

  async siteBelongsToOrg(orgId: string, siteId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM sites WHERE org_id = $1 AND id = $2`, [orgId, siteId])) !== null;
  }
}
