/**
 * Types shared by the PAM rule engine, rule validation, preview SQL and the tier
 * registry. Plain data only: no framework or ORM types, so that services, the ingest
 * path, preview and benchmarks can all use them.
 */

export const PAM_VERDICTS = ['auto_approve', 'auto_deny', 'require_approval', 'ignore'] as const;
export type PamVerdict = (typeof PAM_VERDICTS)[number];

export const FLOW_TYPES = ['uac_intercept', 'tech_jit_admin', 'ai_tool_action'] as const;
export type FlowType = (typeof FLOW_TYPES)[number];

/**
 * The flow types a PAM rule can govern. Every rule governs exactly one, implied by its shape
 * (`ruleFlowType`): a tool-action-shaped rule governs ai_tool_action requests, any other rule
 * observed prompts (uac_intercept). No rule governs tech_jit_admin: a technician's request for
 * admin rights is decided by the organization default alone, so that a rule written for consent
 * prompts (a negated user, say) can never hand out a day of admin rights.
 */
export const RULE_FLOW_TYPES = ['uac_intercept', 'ai_tool_action'] as const satisfies readonly FlowType[];
export type RuleFlowType = (typeof RULE_FLOW_TYPES)[number];

/** The keys accepted in `matchNegate` (spec P2.2), each naming one criterion. */
export const NEGATABLE_KEYS = [
  'signer',
  'signerGroup',
  'hash',
  'pathGlob',
  'parentImage',
  'commandLine',
  'user',
  'adGroup',
  'toolName',
  'riskTier',
] as const;
export type NegatableKey = (typeof NEGATABLE_KEYS)[number];

export type CriterionField =
  | 'matchSigner'
  | 'matchSignerGroupId'
  | 'matchHash'
  | 'matchPathGlob'
  | 'matchParentImage'
  | 'matchCommandLine'
  | 'matchUser'
  | 'matchAdGroup'
  | 'matchToolName'
  | 'matchRiskTier';

export const CRITERION_OF_NEGATABLE_KEY: Readonly<Record<NegatableKey, CriterionField>> = {
  signer: 'matchSigner',
  signerGroup: 'matchSignerGroupId',
  hash: 'matchHash',
  pathGlob: 'matchPathGlob',
  parentImage: 'matchParentImage',
  commandLine: 'matchCommandLine',
  user: 'matchUser',
  adGroup: 'matchAdGroup',
  toolName: 'matchToolName',
  riskTier: 'matchRiskTier',
};

/** Criteria that make a rule executable-shaped (spec P4.2 rule 2). */
export const EXECUTABLE_CRITERIA: readonly CriterionField[] = [
  'matchSigner',
  'matchSignerGroupId',
  'matchHash',
  'matchPathGlob',
  'matchParentImage',
  'matchCommandLine',
];

/** Criteria that make a rule tool-action-shaped (spec P4.2 rule 2). */
export const TOOL_ACTION_CRITERIA: readonly CriterionField[] = ['matchToolName', 'matchRiskTier'];

/** Criteria that fit either shape. */
export const NEUTRAL_CRITERIA: readonly CriterionField[] = ['matchUser', 'matchAdGroup'];

export interface PamTimeWindow {
  /** `HH:MM`, 24-hour, inclusive. */
  start: string;
  /** `HH:MM`, 24-hour, inclusive; earlier than `start` for an overnight window. */
  end: string;
  /** Days the window starts on, 0 (Sunday) to 6 (Saturday); absent means every day. */
  days?: number[] | null;
  /** IANA zone name; absent means UTC. */
  timezone?: string | null;
}

export interface PamRuleCriteria {
  matchSigner?: string | null;
  matchSignerGroupId?: string | null;
  matchHash?: string | null;
  matchPathGlob?: string | null;
  matchParentImage?: string | null;
  matchCommandLine?: string | null;
  matchUser?: string | null;
  matchAdGroup?: string | null;
  matchToolName?: string | null;
  matchRiskTier?: number | null;
  matchNegate?: NegatableKey[] | null;
  timeWindow?: PamTimeWindow | null;
}

export interface PamRuleDefinition extends PamRuleCriteria {
  id: string;
  name: string;
  verdict: PamVerdict;
  priority: number;
  enabled: boolean;
  siteId: string | null;
  approvalDurationMinutes: number | null;
  createdAt: Date;
}

/**
 * What the decision chain knows about one elevation request. A value that is null,
 * undefined or the empty string is missing, and a criterion on a missing value never
 * matches, negated or not (spec P4.2 rule 4).
 */
export interface Observation {
  flowType: FlowType;
  siteId?: string | null;
  signer?: string | null;
  hash?: string | null;
  path?: string | null;
  parentImage?: string | null;
  commandLine?: string | null;
  user?: string | null;
  adGroups?: readonly string[] | null;
  toolName?: string | null;
  riskTier?: number | null;
  /** The server's decision time, never the agent's clock (docs/pam-rules.md, "Matching"). */
  at: Date;
}
