import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { findTierDrift } from './engine/risk-tier.registry';
import { ErrorReporter } from '../../../infra/observability/error-reporter.service';
import { PamRuleRepository } from './pam-rule.repository';

export const TIER_DRIFT_TAG = 'pam_rule_risk_tier_unreachable';

export interface TierDriftFinding {
  ruleId: string;
  ruleName: string;
  orgId: string;
  toolName: string | null;
  riskTier: number;
  validTiers: number[];
}

/**
 * Risk-tier drift at start-up (spec P4.2, P6.3): the tier registry ships with the API, so a
 * new build can re-classify a tool and leave an enabled rule pinned to a tier that tool no
 * longer resolves to. Such a rule can never match (failure is safe: the request falls to
 * the organization default), but someone must fix it, so every start logs
 * `[pam-rule-tier-drift]` naming each rule and raises one error-tracking event per rule.
 * Negated tiers and rules the registry cannot judge (unknown tools) are not flagged. A
 * failed scan is logged and never stops the API from starting.
 */
function selectorOf(toolName: string | null, negated: boolean): string {
  if (!toolName) return 'any tool';
  return negated ? `tools other than ${toolName}` : `tool ${toolName}`;
}

@Injectable()
export class PamTierDriftJob implements OnApplicationBootstrap {
  private readonly logger = new Logger('PamTierDrift');

  constructor(
    private readonly tx: TenantTransactionService,
    private readonly rules: PamRuleRepository,
    private readonly reporter: ErrorReporter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.scan();
    } catch (error) {
      this.logger.error({ err: error }, '[pam-rule-tier-drift] scan failed');
    }
  }

  async scan(): Promise<TierDriftFinding[]> {
    const rows = await this.tx.withSystemContext('tier-drift scan at start-up reads the tier-pinned rules of every organization', () =>
      this.rules.enabledTierPinned(),
    );
    const findings = findTierDrift(
      rows.map((row) => ({ row, enabled: row.enabled, matchToolName: row.match_tool_name, matchRiskTier: row.match_risk_tier, matchNegate: row.match_negate })),
    ).map(({ rule: { row }, validTiers }) => ({
      selector: selectorOf(row.match_tool_name, row.match_negate?.includes('toolName') ?? false),
      ruleId: row.id,
      ruleName: row.name,
      orgId: row.org_id,
      toolName: row.match_tool_name,
      riskTier: row.match_risk_tier!,
      validTiers,
    }));
    for (const { selector, ...finding } of findings) {
      const message =
        `[pam-rule-tier-drift] rule "${finding.ruleName}" (${finding.ruleId}, organization ${finding.orgId}) pins risk tier ${finding.riskTier}, ` +
        `now unreachable for ${selector} (valid tiers: ${finding.validTiers.join(', ')}); it cannot match until it is changed`;
      this.logger.warn(finding, message);
      await this.reporter.report({ tag: TIER_DRIFT_TAG, level: 'warning', message, context: { ...finding } });
    }
    return findings.map(({ selector: _selector, ...finding }) => finding);
  }
}
