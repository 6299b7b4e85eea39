import type { PamRuleRow } from '../../src/modules/pam/rules/pam-rule.repository';

export const RULE_ORG_ID = '00000000-0000-4000-8000-00000000000a';

let next = 0;

/** A stored PAM rule as the repository returns it: enabled, priority 100, no criteria unless given; ids and names in sequence. */
export function pamRuleRow(overrides: Partial<PamRuleRow> = {}): PamRuleRow {
  next++;
  const at = new Date('2025-01-01T00:00:00Z');
  return {
    id: `00000000-0000-4000-8000-${String(next).padStart(12, '0')}`,
    org_id: RULE_ORG_ID,
    site_id: null,
    name: `rule ${next}`,
    verdict: 'auto_approve',
    priority: 100,
    enabled: true,
    match_signer: null,
    match_signer_group_id: null,
    match_hash: null,
    match_path_glob: null,
    match_parent_image: null,
    match_command_line: null,
    match_user: null,
    match_ad_group: null,
    match_tool_name: null,
    match_risk_tier: null,
    match_negate: null,
    time_window: null,
    approval_duration_minutes: null,
    created_by: null,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}
