import { normaliseCriteria, validateRuleShape } from './engine/rule-shape.util';
import type { PamRuleCriteria, PamTimeWindow, PamVerdict } from './engine/rule.types';
import { DEFAULT_TIMEZONE } from './engine/time-window.util';
import type { AppException } from '../../../common/errors/app.exception';
import { PamErrors } from '../pam.errors';
import type { PamRuleWrite } from './pam-rule.repository';

export const DEFAULT_RULE_PRIORITY = 100;

/** Fields of a create or update body: undefined keeps the base value, null clears it. */
export type RuleInput = { [K in keyof PamRuleWrite]?: PamRuleWrite[K] | (K extends 'timeWindow' ? TimeWindowInput : never) };

export interface TimeWindowInput {
  start: string;
  end: string;
  days?: number[] | null;
  timezone?: string | null;
}

const EMPTY: Omit<PamRuleWrite, 'name' | 'verdict'> = {
  siteId: null,
  priority: DEFAULT_RULE_PRIORITY,
  enabled: true,
  matchSigner: null,
  matchSignerGroupId: null,
  matchHash: null,
  matchPathGlob: null,
  matchParentImage: null,
  matchCommandLine: null,
  matchUser: null,
  matchAdGroup: null,
  matchToolName: null,
  matchRiskTier: null,
  matchNegate: null,
  timeWindow: null,
  approvalDurationMinutes: null,
};

/** The stored form of a window: plain object, every day as null, the zone explicit (UTC by default). */
export function storedWindow(window: TimeWindowInput | PamTimeWindow | null | undefined): PamTimeWindow | null {
  if (!window) return null;
  const days = window.days && window.days.length > 0 ? [...new Set(window.days)].sort((a, b) => a - b) : null;
  return { start: window.start.trim(), end: window.end.trim(), days, timezone: window.timezone?.trim() || DEFAULT_TIMEZONE };
}

/** Applies `input` over `base` and normalises the criteria (trimmed, blank as null, hash lower case). */
export function mergeRuleWrite(base: PamRuleWrite, input: RuleInput): PamRuleWrite {
  const merged = { ...base };
  for (const [key, value] of Object.entries(input) as [keyof PamRuleWrite, unknown][]) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  merged.timeWindow = storedWindow(merged.timeWindow);
  const normalised = normaliseCriteria(merged);
  return { ...normalised, timeWindow: merged.timeWindow };
}

/** A new rule: the defaults of spec P2.2 (priority 100, enabled) under the given fields. */
export function newRuleWrite(input: RuleInput & Pick<PamRuleWrite, 'name' | 'verdict'>): PamRuleWrite {
  return mergeRuleWrite({ ...EMPTY, name: input.name, verdict: input.verdict }, input);
}

/** The shape checks of spec P4.2 with the error codes of docs/pam-rules.md; null when the rule is valid. */
export function ruleShapeError(rule: PamRuleCriteria & { verdict: PamVerdict }): AppException | null {
  const result = validateRuleShape(rule);
  if (result.ok) return null;
  if (result.code === 'pam_rule_risk_tier_unreachable') return PamErrors.riskTierUnreachable(result.message, result.validTiers ?? []);
  return PamErrors.invalidRuleShape(result.message);
}
