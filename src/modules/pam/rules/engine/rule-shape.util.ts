import { asciiLower } from './text.util';
import { tiersForToolSelector } from './risk-tier.registry';
import {
  CRITERION_OF_NEGATABLE_KEY,
  EXECUTABLE_CRITERIA,
  NEGATABLE_KEYS,
  NEUTRAL_CRITERIA,
  PAM_VERDICTS,
  TOOL_ACTION_CRITERIA,
  type CriterionField,
  type NegatableKey,
  type PamRuleCriteria,
  type PamVerdict,
  type RuleFlowType,
} from './rule.types';
import { validateTimeWindow } from './time-window.util';

export type RuleShapeErrorCode = 'invalid_rule_shape' | 'pam_rule_risk_tier_unreachable';

export type RuleShapeResult =
  | { ok: true }
  | { ok: false; code: RuleShapeErrorCode; message: string; validTiers?: number[] };

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

const STRING_CRITERIA = [
  'matchSigner',
  'matchSignerGroupId',
  'matchHash',
  'matchPathGlob',
  'matchParentImage',
  'matchCommandLine',
  'matchUser',
  'matchAdGroup',
  'matchToolName',
] as const;

/** Whether a criterion constrains matching: a non-blank string, or any non-null tier. */
export function isCriterionSet(criteria: PamRuleCriteria, field: CriterionField): boolean {
  const value = criteria[field];
  if (value === null || value === undefined) return false;
  return typeof value === 'string' ? value.trim() !== '' : true;
}

/** Tool-action-shaped: pins a tool name or a risk tier, and so governs ai_tool_action requests only. */
export function isToolActionShaped(criteria: PamRuleCriteria): boolean {
  return TOOL_ACTION_CRITERIA.some((field) => isCriterionSet(criteria, field));
}

/** The one flow type a rule governs: tool actions for a tool-action-shaped rule, observed prompts for any other. */
export function ruleFlowType(criteria: PamRuleCriteria): RuleFlowType {
  return isToolActionShaped(criteria) ? 'ai_tool_action' : 'uac_intercept';
}

function trimOrNull(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * The stored form of rule criteria: strings trimmed, blank ones null, the hash in lower
 * case, negation keys and days de-duplicated, empty lists null. Absent properties stay
 * absent so that a partial update can be normalised before it is merged. Nothing is
 * rejected here: `validateRuleShape` judges the result.
 */
export function normaliseCriteria<T extends PamRuleCriteria>(criteria: T): T {
  const result: T = { ...criteria };
  for (const field of STRING_CRITERIA) {
    if (field in result) result[field] = trimOrNull(result[field]);
  }
  if (typeof result.matchHash === 'string') result.matchHash = asciiLower(result.matchHash);
  if (Array.isArray(result.matchNegate)) {
    const keys = [...new Set(result.matchNegate.map((key) => (typeof key === 'string' ? key.trim() : key)))];
    result.matchNegate = keys.length === 0 ? null : (keys as NegatableKey[]);
  }
  const window = result.timeWindow;
  if (window && typeof window === 'object') {
    result.timeWindow = {
      ...window,
      start: typeof window.start === 'string' ? window.start.trim() : window.start,
      end: typeof window.end === 'string' ? window.end.trim() : window.end,
      ...(Array.isArray(window.days) ? { days: [...new Set(window.days)].sort((a, b) => a - b) } : {}),
      ...(typeof window.timezone === 'string' ? { timezone: trimOrNull(window.timezone) } : {}),
    };
  }
  return result;
}

const CRITERION_LABEL: Readonly<Record<CriterionField, string>> = {
  matchSigner: 'signer',
  matchSignerGroupId: 'signer group',
  matchHash: 'hash',
  matchPathGlob: 'path',
  matchParentImage: 'parent image',
  matchCommandLine: 'command line',
  matchUser: 'user',
  matchAdGroup: 'directory group',
  matchToolName: 'tool name',
  matchRiskTier: 'risk tier',
};

const IDENTIFYING_CRITERIA: readonly CriterionField[] = [
  ...EXECUTABLE_CRITERIA,
  ...NEUTRAL_CRITERIA,
  ...TOOL_ACTION_CRITERIA,
];

function shapeProblems(rule: PamRuleCriteria & { verdict: PamVerdict }): string[] {
  const problems: string[] = [];
  const set = (field: CriterionField) => isCriterionSet(rule, field);

  if (!PAM_VERDICTS.includes(rule.verdict)) problems.push(`verdict must be one of ${PAM_VERDICTS.join(', ')}`);
  if (set('matchHash') && !SHA256_HEX.test(rule.matchHash!)) {
    problems.push('matchHash must be a SHA-256 digest: 64 hexadecimal characters');
  }
  if (set('matchRiskTier')) {
    const tier = rule.matchRiskTier!;
    if (!Number.isInteger(tier) || tier < 0 || tier > 4) problems.push('matchRiskTier must be an integer from 0 to 4');
  }
  if (rule.timeWindow !== null && rule.timeWindow !== undefined) problems.push(...validateTimeWindow(rule.timeWindow));

  const labels = (fields: readonly CriterionField[]) => fields.map((field) => CRITERION_LABEL[field]).join(', ');
  if (!IDENTIFYING_CRITERIA.some(set)) {
    const criteria = labels(IDENTIFYING_CRITERIA);
    problems.push(`a rule needs at least one identifying criterion (${criteria}); a time window alone is not one`);
  }
  const executable = EXECUTABLE_CRITERIA.filter(set);
  const toolAction = TOOL_ACTION_CRITERIA.filter(set);
  if (executable.length > 0 && toolAction.length > 0) {
    problems.push(
      `a rule matches executables (${labels(executable)}) or tool actions (${labels(toolAction)}), not both`,
    );
  }
  if (set('matchSigner') && set('matchSignerGroupId')) {
    problems.push('matchSigner and matchSignerGroupId are mutually exclusive');
  }
  const negate: unknown = rule.matchNegate;
  if (negate !== null && negate !== undefined) {
    if (!Array.isArray(negate)) {
      problems.push('matchNegate must be a list of criterion keys or null');
    } else {
      for (const key of negate) {
        if (!(NEGATABLE_KEYS as readonly unknown[]).includes(key)) {
          problems.push(`matchNegate key ${JSON.stringify(key)} is not one of ${NEGATABLE_KEYS.join(', ')}`);
        } else if (!set(CRITERION_OF_NEGATABLE_KEY[key as NegatableKey])) {
          problems.push(`matchNegate names ${key}, but ${CRITERION_OF_NEGATABLE_KEY[key as NegatableKey]} is not set`);
        }
      }
    }
  }
  if (rule.verdict === 'ignore' && toolAction.length > 0) {
    problems.push('verdict ignore is not allowed for tool-action rules: every tool action must leave a record');
  }
  return problems;
}

/**
 * The rule-shape checks of spec P4.2, on normalised criteria (`normaliseCriteria`).
 * Rules 1–5 and malformed values give `invalid_rule_shape` with every problem in the
 * message; an unreachable tier (rule 6) is checked only on an otherwise valid rule.
 */
export function validateRuleShape(rule: PamRuleCriteria & { verdict: PamVerdict }): RuleShapeResult {
  const problems = shapeProblems(rule);
  if (problems.length > 0) return { ok: false, code: 'invalid_rule_shape', message: problems.join('; ') };

  const tier = rule.matchRiskTier;
  const negate = rule.matchNegate ?? [];
  if (tier === null || tier === undefined || negate.includes('riskTier')) return { ok: true };
  const validTiers = tiersForToolSelector(rule.matchToolName, negate.includes('toolName'));
  if (validTiers === null || validTiers.includes(tier)) return { ok: true };
  const selector = rule.matchToolName?.trim()
    ? `${negate.includes('toolName') ? 'tools other than ' : 'tool '}${rule.matchToolName.trim()}`
    : 'any tool';
  return {
    ok: false,
    code: 'pam_rule_risk_tier_unreachable',
    message: `risk tier ${tier} is unreachable for ${selector}; valid tiers: ${validTiers.join(', ')}`,
    validTiers,
  };
}
