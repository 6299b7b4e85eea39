import { compileGlobPattern, matchGlobSegments, toGlobSegments, type GlobPattern } from './glob.util';
import { isCriterionSet, ruleFlowType } from './rule-shape.util';
import { RULE_FLOW_TYPES, type CriterionField, type NegatableKey, type Observation, type PamRuleDefinition, type RuleFlowType } from './rule.types';
import {
  compileTimeWindow,
  isWithinCompiledWindow,
  localTimeAt,
  type CompiledTimeWindow,
  type LocalTime,
} from './time-window.util';
import { asciiLower, intern } from './text.util';

/**
 * The PAM rule matcher. Rules are compiled once per rules version (globs parsed,
 * strings folded, signer groups turned into sets, order fixed), observations once per
 * request, and the loop then compares precomputed values without allocating.
 *
 * Matching: every set criterion must hold. Signer, user, hash and tool name compare
 * exactly, ignoring ASCII case; the command line by case-insensitive substring; the
 * directory group against any of the observation's groups; the signer group by
 * membership of the signer; the risk tier by equality; path and parent image by glob.
 * `matchNegate` inverts a criterion, but a criterion on a value the observation lacks
 * never holds, negated or not (spec P4.2 rule 4). A rule with a site applies to that
 * site only. The time window is read at the server's decision time.
 *
 * Flow types: every rule governs the one flow type its shape implies (`ruleFlowType`):
 * tool-action rules ai_tool_action requests, every other rule uac_intercept requests.
 * The compiled set keeps one partition per governed flow type and there is none for
 * tech_jit_admin, so a just-in-time request never reaches any rule, whatever its
 * criteria or negations; the decision chain gives it the organization default.
 *
 * Evaluation does not scan every rule: each compiled set files a rule under one
 * value it cannot match without (its hash, signer, a path or parent-image segment,
 * tool name or user, when set and not negated), so a request only visits the rules
 * filed under its own values plus those filed under none, in evaluation order.
 */

/** A flow type no rule governs (tech_jit_admin, or an unknown one): matches no rule. */
const FLOW_NONE = 0;
const FLOW_UAC_INTERCEPT = 1;
const FLOW_TOOL_ACTION = 2;

const FLOW_CODE: Readonly<Record<RuleFlowType, number>> = { uac_intercept: FLOW_UAC_INTERCEPT, ai_tool_action: FLOW_TOOL_ACTION };

/** Thrown when a rule cannot be compiled; the decision chain must then record the request as pending. */
export class PamRuleCompileError extends Error {
  constructor(
    readonly ruleId: string,
    reason: string,
  ) {
    super(`PAM rule ${ruleId} cannot be compiled: ${reason}`);
    this.name = 'PamRuleCompileError';
  }
}

export interface RuleMatch {
  readonly rule: PamRuleDefinition;
}

export interface CompiledRule {
  readonly rule: PamRuleDefinition;
  /** Returned by `evaluate`, built once so that a match allocates nothing. */
  readonly match: RuleMatch;
  readonly flow: number;
  readonly siteId: string | null;
  readonly signer: string | null;
  readonly signerNegated: boolean;
  readonly signerGroup: ReadonlySet<string> | null;
  readonly signerGroupNegated: boolean;
  readonly hash: string | null;
  readonly hashNegated: boolean;
  readonly pathGlob: GlobPattern | null;
  readonly pathGlobNegated: boolean;
  readonly parentImage: GlobPattern | null;
  readonly parentImageNegated: boolean;
  readonly commandLine: string | null;
  readonly commandLineNegated: boolean;
  readonly user: string | null;
  readonly userNegated: boolean;
  readonly adGroup: string | null;
  readonly adGroupNegated: boolean;
  readonly toolName: string | null;
  readonly toolNameNegated: boolean;
  readonly riskTier: number | null;
  readonly riskTierNegated: boolean;
  readonly window: CompiledTimeWindow | null;
}

/** Positions in `CompiledRuleSet.rules`, ascending, by the value a rule cannot match without. */
export interface RuleBuckets {
  readonly byHash: ReadonlyMap<string, Int32Array>;
  readonly bySigner: ReadonlyMap<string, Int32Array>;
  /** Keyed `<position>/<segment>`, see `GlobPattern.anchoredLiteral`. */
  readonly byPathSegment: ReadonlyMap<string, Int32Array>;
  readonly byPathTail: ReadonlyMap<string, Int32Array>;
  readonly byParentImageSegment: ReadonlyMap<string, Int32Array>;
  readonly byParentImageTail: ReadonlyMap<string, Int32Array>;
  readonly byToolName: ReadonlyMap<string, Int32Array>;
  readonly byUser: ReadonlyMap<string, Int32Array>;
  /** Rules with none of the above. */
  readonly unfiled: Int32Array;
}

export interface CompiledRuleSet {
  /** Enabled rules in evaluation order: priority, then createdAt, then id, ascending. */
  readonly rules: readonly CompiledRule[];
  /**
   * One partition per flow type a rule can govern, each holding only that flow's rules. There
   * is deliberately no partition for tech_jit_admin.
   */
  readonly byFlow: Readonly<Record<RuleFlowType, RuleBuckets>>;
}

/** An observation with every value folded and split once, for matching against many rules. */
export interface PreparedObservation {
  readonly flow: number;
  readonly siteId: string | null;
  readonly signer: string | null;
  readonly hash: string | null;
  readonly pathSegments: readonly string[] | null;
  readonly parentImageSegments: readonly string[] | null;
  readonly commandLine: string | null;
  readonly user: string | null;
  readonly adGroups: readonly string[] | null;
  readonly toolName: string | null;
  readonly riskTier: number | null;
  readonly at: Date;
  /** Local times by zone, filled when a rule with a time window is reached. */
  localTimes: Map<string, LocalTime | null> | null;
}

/** Signer lists by signer-group id, as stored (trimmed); folding happens here. */
export type SignerGroupMembers = ReadonlyMap<string, readonly string[]>;

function folded(value: string | null | undefined): string | null {
  return typeof value === 'string' && value !== '' ? intern(asciiLower(value)) : null;
}

function flowOf(flowType: string): number {
  return (RULE_FLOW_TYPES as readonly string[]).includes(flowType) ? FLOW_CODE[flowType as RuleFlowType] : FLOW_NONE;
}

export function prepareObservation(observation: Observation): PreparedObservation {
  const groups = (observation.adGroups ?? []).filter((group) => typeof group === 'string' && group !== '');
  const tier = observation.riskTier;
  return {
    flow: flowOf(observation.flowType),
    siteId: folded(observation.siteId),
    signer: folded(observation.signer),
    hash: folded(observation.hash),
    pathSegments: observation.path ? toGlobSegments(observation.path) : null,
    parentImageSegments: observation.parentImage ? toGlobSegments(observation.parentImage) : null,
    commandLine: typeof observation.commandLine === 'string' && observation.commandLine !== ''
      ? asciiLower(observation.commandLine)
      : null,
    user: folded(observation.user),
    adGroups: groups.length > 0 ? groups.map((group) => intern(asciiLower(group))) : null,
    toolName: folded(observation.toolName),
    riskTier: typeof tier === 'number' && Number.isFinite(tier) ? tier : null,
    at: observation.at,
    localTimes: null,
  };
}

export function compileRule(rule: PamRuleDefinition, signerGroups: SignerGroupMembers): CompiledRule {
  const negate = rule.matchNegate ?? [];
  const negated = (key: NegatableKey) => negate.includes(key);
  const text = (field: CriterionField) =>
    isCriterionSet(rule, field) ? intern(asciiLower(rule[field] as string)) : null;
  const glob = (field: CriterionField) =>
    isCriterionSet(rule, field) ? compileGlobPattern(rule[field] as string) : null;

  let signerGroup: ReadonlySet<string> | null = null;
  if (isCriterionSet(rule, 'matchSignerGroupId')) {
    const members = signerGroups.get(rule.matchSignerGroupId!);
    // A group that cannot be resolved must not act as an empty one: negated, that would match every signer.
    if (!members) throw new PamRuleCompileError(rule.id, `signer group ${rule.matchSignerGroupId} is unknown`);
    signerGroup = new Set(members.map(asciiLower));
  }

  let window: CompiledTimeWindow | null = null;
  if (rule.timeWindow !== null && rule.timeWindow !== undefined) {
    try {
      window = compileTimeWindow(rule.timeWindow);
    } catch (error) {
      throw new PamRuleCompileError(rule.id, (error as Error).message);
    }
  }

  return {
    rule,
    match: { rule },
    flow: FLOW_CODE[ruleFlowType(rule)],
    siteId: rule.siteId ? intern(asciiLower(rule.siteId)) : null,
    signer: text('matchSigner'),
    signerNegated: negated('signer'),
    signerGroup,
    signerGroupNegated: negated('signerGroup'),
    hash: text('matchHash'),
    hashNegated: negated('hash'),
    pathGlob: glob('matchPathGlob'),
    pathGlobNegated: negated('pathGlob'),
    parentImage: glob('matchParentImage'),
    parentImageNegated: negated('parentImage'),
    commandLine: isCriterionSet(rule, 'matchCommandLine') ? asciiLower(rule.matchCommandLine!) : null,
    commandLineNegated: negated('commandLine'),
    user: text('matchUser'),
    userNegated: negated('user'),
    adGroup: text('matchAdGroup'),
    adGroupNegated: negated('adGroup'),
    toolName: text('matchToolName'),
    toolNameNegated: negated('toolName'),
    riskTier: isCriterionSet(rule, 'matchRiskTier') ? rule.matchRiskTier! : null,
    riskTierNegated: negated('riskTier'),
    window,
  };
}

/** Evaluation order: priority, then createdAt, then id (code-unit order, independent of locale). */
export function compareRuleOrder(a: PamRuleDefinition, b: PamRuleDefinition): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  const created = a.createdAt.getTime() - b.createdAt.getTime();
  if (created !== 0) return created;
  if (a.id === b.id) return 0;
  return a.id < b.id ? -1 : 1;
}

type BucketName = Exclude<keyof RuleBuckets, 'unfiled'>;

function segmentKey(position: number, segment: string): string {
  return `${position}/${segment}`;
}

/**
 * Where to file a glob: under an anchored segment below the root (a folder name is
 * usually selective), else under the last segment, else under the root segment (a
 * drive letter is not selective, but no worse than not filing the rule).
 */
function globBucket(
  pattern: GlobPattern,
  segmentBucket: BucketName,
  tailBucket: BucketName,
): [BucketName, string] | null {
  const anchored = pattern.anchoredLiteral;
  const last = pattern.lastLiteral;
  if (anchored === null) return last === null ? null : [tailBucket, last];
  if (anchored.position === 0 && last !== null) return [tailBucket, last];
  return [segmentBucket, segmentKey(anchored.position, anchored.literal)];
}

/** The most selective value the rule cannot match without, if any. */
function bucketOf(rule: CompiledRule): [BucketName, string] | null {
  if (rule.hash !== null && !rule.hashNegated) return ['byHash', rule.hash];
  if (rule.signer !== null && !rule.signerNegated) return ['bySigner', rule.signer];
  const byPath = rule.pathGlob !== null && !rule.pathGlobNegated;
  const path = byPath ? globBucket(rule.pathGlob!, 'byPathSegment', 'byPathTail') : null;
  if (path !== null) return path;
  const byParent = rule.parentImage !== null && !rule.parentImageNegated;
  const parent = byParent ? globBucket(rule.parentImage!, 'byParentImageSegment', 'byParentImageTail') : null;
  if (parent !== null) return parent;
  if (rule.toolName !== null && !rule.toolNameNegated) return ['byToolName', rule.toolName];
  if (rule.user !== null && !rule.userNegated) return ['byUser', rule.user];
  return null;
}

function fileRules(rules: readonly CompiledRule[], flow: number): RuleBuckets {
  const filed: Record<BucketName, Map<string, number[]>> = {
    byHash: new Map(),
    bySigner: new Map(),
    byPathSegment: new Map(),
    byPathTail: new Map(),
    byParentImageSegment: new Map(),
    byParentImageTail: new Map(),
    byToolName: new Map(),
    byUser: new Map(),
  };
  const unfiled: number[] = [];
  rules.forEach((rule, position) => {
    if (rule.flow !== flow) return;
    const bucket = bucketOf(rule);
    if (bucket === null) {
      unfiled.push(position);
      return;
    }
    const [name, key] = bucket;
    const positions = filed[name].get(key);
    if (positions) positions.push(position);
    else filed[name].set(key, [position]);
  });
  const freeze = (map: Map<string, number[]>) =>
    new Map([...map].map(([key, positions]) => [key, Int32Array.from(positions)] as const));
  return {
    byHash: freeze(filed.byHash),
    bySigner: freeze(filed.bySigner),
    byPathSegment: freeze(filed.byPathSegment),
    byPathTail: freeze(filed.byPathTail),
    byParentImageSegment: freeze(filed.byParentImageSegment),
    byParentImageTail: freeze(filed.byParentImageTail),
    byToolName: freeze(filed.byToolName),
    byUser: freeze(filed.byUser),
    unfiled: Int32Array.from(unfiled),
  };
}

/**
 * Drops disabled rules, fixes the evaluation order and files the rules for lookup.
 * Throws PamRuleCompileError for an enabled rule that cannot be compiled.
 */
export function compileRules(rules: readonly PamRuleDefinition[], signerGroups: SignerGroupMembers): CompiledRuleSet {
  // Sorting before compiling allocates the compiled rules in the order the loop reads
  // them; sorted afterwards, 10,000 rules scattered over the heap cost cache misses.
  const compiled = rules
    .filter((rule) => rule.enabled)
    .sort(compareRuleOrder)
    .map((rule) => compileRule(rule, signerGroups));
  return {
    rules: compiled,
    byFlow: {
      uac_intercept: fileRules(compiled, FLOW_UAC_INTERCEPT),
      ai_tool_action: fileRules(compiled, FLOW_TOOL_ACTION),
    },
  };
}

function localTimeFor(observation: PreparedObservation, timezone: string): LocalTime | null {
  let cache = observation.localTimes;
  if (cache === null) {
    cache = new Map();
    observation.localTimes = cache;
  }
  let local = cache.get(timezone);
  if (local === undefined) {
    local = localTimeAt(timezone, observation.at);
    cache.set(timezone, local);
  }
  return local;
}

function globHolds(pattern: GlobPattern, segments: readonly string[] | null, negated: boolean): boolean {
  return segments !== null && matchGlobSegments(pattern, segments) !== negated;
}

/**
 * Each block below reads: the criterion is set, so the value must be present and the
 * comparison must differ from the negation flag.
 */
export function matchesPrepared(rule: CompiledRule, o: PreparedObservation): boolean {
  if (rule.flow !== o.flow) return false;
  if (rule.siteId !== null && rule.siteId !== o.siteId) return false;
  if (rule.riskTier !== null && (o.riskTier === null || (o.riskTier === rule.riskTier) === rule.riskTierNegated)) {
    return false;
  }
  if (rule.toolName !== null && (o.toolName === null || (o.toolName === rule.toolName) === rule.toolNameNegated)) {
    return false;
  }
  if (rule.signer !== null && (o.signer === null || (o.signer === rule.signer) === rule.signerNegated)) return false;
  if (rule.hash !== null && (o.hash === null || (o.hash === rule.hash) === rule.hashNegated)) return false;
  if (rule.user !== null && (o.user === null || (o.user === rule.user) === rule.userNegated)) return false;
  if (
    rule.signerGroup !== null &&
    (o.signer === null || rule.signerGroup.has(o.signer) === rule.signerGroupNegated)
  ) {
    return false;
  }
  if (rule.adGroup !== null && (o.adGroups === null || o.adGroups.includes(rule.adGroup) === rule.adGroupNegated)) {
    return false;
  }
  if (
    rule.commandLine !== null &&
    (o.commandLine === null || o.commandLine.includes(rule.commandLine) === rule.commandLineNegated)
  ) {
    return false;
  }
  if (rule.pathGlob !== null && !globHolds(rule.pathGlob, o.pathSegments, rule.pathGlobNegated)) return false;
  if (rule.parentImage !== null && !globHolds(rule.parentImage, o.parentImageSegments, rule.parentImageNegated)) {
    return false;
  }
  if (rule.window !== null) {
    const local = localTimeFor(o, rule.window.timezone);
    if (local === null || !isWithinCompiledWindow(rule.window, local)) return false;
  }
  return true;
}

/** One rule against one observation, ignoring priority: what preview needs. */
export function matchesRule(rule: CompiledRule, observation: Observation): boolean {
  return matchesPrepared(rule, prepareObservation(observation));
}

function lastOf(segments: readonly string[] | null): string | null {
  return segments === null ? null : segments[segments.length - 1];
}

function candidateLists(buckets: RuleBuckets, o: PreparedObservation): Int32Array[] {
  const lists: Int32Array[] = [];
  const add = (map: ReadonlyMap<string, Int32Array>, key: string | null) => {
    const list = key === null ? undefined : map.get(key);
    if (list !== undefined) lists.push(list);
  };
  const addSegments = (map: ReadonlyMap<string, Int32Array>, segments: readonly string[] | null) => {
    if (segments === null || map.size === 0) return;
    for (let position = 0; position < segments.length; position++) add(map, segmentKey(position, segments[position]));
  };
  add(buckets.byHash, o.hash);
  add(buckets.bySigner, o.signer);
  addSegments(buckets.byPathSegment, o.pathSegments);
  add(buckets.byPathTail, lastOf(o.pathSegments));
  addSegments(buckets.byParentImageSegment, o.parentImageSegments);
  add(buckets.byParentImageTail, lastOf(o.parentImageSegments));
  add(buckets.byToolName, o.toolName);
  add(buckets.byUser, o.user);
  if (buckets.unfiled.length > 0) lists.push(buckets.unfiled);
  return lists;
}

/** Walks the candidate lists merged in ascending position, so the first match is the first in evaluation order. */
function firstMatch(rules: readonly CompiledRule[], lists: Int32Array[], o: PreparedObservation): RuleMatch | null {
  if (lists.length === 1) {
    const list = lists[0];
    for (let index = 0; index < list.length; index++) {
      const rule = rules[list[index]];
      if (matchesPrepared(rule, o)) return rule.match;
    }
    return null;
  }
  const cursors = new Int32Array(lists.length);
  for (;;) {
    let best = -1;
    let bestPosition = 0x7fffffff;
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l];
      const cursor = cursors[l];
      if (cursor < list.length && list[cursor] < bestPosition) {
        bestPosition = list[cursor];
        best = l;
      }
    }
    if (best < 0) return null;
    cursors[best]++;
    const rule = rules[bestPosition];
    if (matchesPrepared(rule, o)) return rule.match;
  }
}

/** Whether any rule can govern requests of this flow type (false for tech_jit_admin). */
export function isRuleGovernedFlow(flowType: string): flowType is RuleFlowType {
  return flowOf(flowType) !== FLOW_NONE;
}

/**
 * The first rule in evaluation order that matches, or null when none does. Only the partition
 * of the observation's flow type is searched; a flow type without one sees no rule at all.
 */
export function evaluate(set: CompiledRuleSet, observation: Observation): RuleMatch | null {
  if (!isRuleGovernedFlow(observation.flowType)) return null;
  const prepared = prepareObservation(observation);
  const buckets = set.byFlow[observation.flowType];
  const lists = candidateLists(buckets, prepared);
  return lists.length === 0 ? null : firstMatch(set.rules, lists, prepared);
}
