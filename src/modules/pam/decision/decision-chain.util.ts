import { evaluate, isRuleGovernedFlow, type CompiledRuleSet } from '../rules/engine/rule-engine';
import type { Observation, PamRuleDefinition } from '../rules/engine/rule.types';
import { ALLOWLIST_APPROVAL_MINUTES, Decision, DecisionRule, OrgPamDefaults } from './decision.types';
import { runBridge, type BridgeResult, type CompiledSoftwarePolicy } from './software-bridge.util';

/** One evaluator's input: its value, or the error that kept it from being built. */
export type Evaluator<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ChainInput {
  observation: Observation;
  /** null: the bridge does not apply (not an observed executable, or no software policy). */
  software: Evaluator<readonly CompiledSoftwarePolicy[]> | null;
  /** null: no rule governs the flow type (tech_jit_admin), so none is consulted. */
  rules: Evaluator<CompiledRuleSet> | null;
  defaults: OrgPamDefaults;
}

function ruleOf(r: PamRuleDefinition): DecisionRule {
  return { id: r.id, name: r.name, verdict: r.verdict, approvalDurationMinutes: r.approvalDurationMinutes };
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The decision chain of spec P1.3: the software-policy bridge, then the PAM rules in
 * evaluation order, then the organization's default verdict. If either evaluator fails the
 * request is pending, whatever the default, so a broken rule or policy can never auto-approve
 * or silently deny.
 *
 * - blocklist hit → denied; allowlist hit → auto_approved for 15 minutes; audit hits → evidence.
 * - rule auto_approve → auto_approved for the rule's approvalDurationMinutes, else the
 *   organization's default window; auto_deny → denied; require_approval → pending;
 *   ignore → ignored for an observed prompt (no row), pending for any other flow, since a
 *   request a person or a tool made cannot be dropped unanswered.
 * - no rule → the default: require_approval → pending, auto_deny → denied.
 * - tech_jit_admin → the default only: no rule governs it (see RULE_FLOW_TYPES), so neither a
 *   rule nor a broken rule changes its outcome, and it is never auto-approved.
 */
export function runChain(input: ChainInput): Decision {
  const { observation, defaults } = input;
  let bridge: BridgeResult = { verdict: null, policy: null, evidence: [] };
  if (input.software) {
    if (!input.software.ok) return pendingAfterError(input.software.error, bridge);
    try {
      bridge = runBridge(input.software.value, { path: observation.path, hash: observation.hash, signer: observation.signer });
    } catch (e) {
      return pendingAfterError(errorMessage(e), bridge);
    }
  }
  const base = { policy: bridge.policy, evidence: bridge.evidence, error: null };
  if (bridge.verdict === 'deny') return { ...base, outcome: 'denied', source: 'software_policy', rule: null, durationMinutes: null };
  if (bridge.verdict === 'allow') return { ...base, outcome: 'auto_approved', source: 'software_policy', rule: null, durationMinutes: ALLOWLIST_APPROVAL_MINUTES };

  let matched: PamRuleDefinition | null = null;
  if (isRuleGovernedFlow(observation.flowType)) {
    if (input.rules === null) return pendingAfterError('rules were not read for a flow type they govern', bridge);
    if (!input.rules.ok) return pendingAfterError(input.rules.error, bridge);
    try {
      matched = evaluate(input.rules.value, observation)?.rule ?? null;
    } catch (e) {
      return pendingAfterError(errorMessage(e), bridge);
    }
  }
  if (matched) {
    const rule = ruleOf(matched);
    const decided = { ...base, source: 'pam_rule' as const, rule };
    switch (matched.verdict) {
      case 'auto_approve':
        return { ...decided, outcome: 'auto_approved', durationMinutes: matched.approvalDurationMinutes ?? defaults.defaultApprovalDurationMinutes };
      case 'auto_deny':
        return { ...decided, outcome: 'denied', durationMinutes: null };
      case 'ignore':
        return { ...decided, outcome: observation.flowType === 'uac_intercept' ? 'ignored' : 'pending', durationMinutes: null };
      default:
        return { ...decided, outcome: 'pending', durationMinutes: null };
    }
  }
  const outcome = defaults.defaultUnmatchedVerdict === 'auto_deny' ? 'denied' : 'pending';
  return { ...base, outcome, source: 'org_default', rule: null, durationMinutes: null };
}

function pendingAfterError(error: string, bridge: BridgeResult): Decision {
  return { outcome: 'pending', source: null, rule: null, policy: bridge.policy, durationMinutes: null, evidence: bridge.evidence, error };
}
