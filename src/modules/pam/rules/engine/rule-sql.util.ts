import { asciiLower } from './text.util';
import { globToPosixRegex } from './glob.util';
import { isCriterionSet, ruleFlowType } from './rule-shape.util';
import type { CriterionField, FlowType, NegatableKey, Observation, PamRuleCriteria } from './rule.types';
import { compileTimeWindow } from './time-window.util';

/**
 * The SQL twin of `matchesRule`, for rule preview over stored elevation requests. The
 * expression is true exactly when `matchesRule` holds for `observationFromRow(row)`,
 * and never NULL, so it can be negated or combined freely.
 *
 * How agreement is kept:
 * - missing data: a NULL or '' column is missing, as null, undefined and '' are in
 *   JavaScript, and a criterion on a missing value is false, negated or not;
 * - case: both sides fold ASCII letters only (`asciiLower` in JavaScript,
 *   `lower(x COLLATE "C")` and `~*` under `COLLATE "C"` here), whatever the locale;
 * - globs: the regex of `globToPosixRegex` applied to the column with backslashes
 *   turned into slashes;
 * - time windows: local wall time from `AT TIME ZONE`, minute and weekday compared as
 *   the engine does. Both read the IANA database, Node's through ICU and PostgreSQL's
 *   own, so a zone whose rules changed recently can differ until both are updated;
 * - values are passed as parameters, never spliced into the text.
 */

export interface SqlRuleInput extends PamRuleCriteria {
  siteId?: string | null;
  /** Members of `matchSignerGroupId`, resolved by the caller. Required when a group is set. */
  signerGroupSigners?: readonly string[] | null;
}

const ALIAS = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Appends the rule's parameters to `params` and returns a boolean SQL expression over
 * the elevation-request row aliased `alias`. Throws for an alias that is not a plain
 * identifier, a signer group without its members, or an invalid time window.
 */
export function ruleToSql(criteria: SqlRuleInput, alias: string, params: unknown[]): string {
  if (!ALIAS.test(alias)) throw new Error(`ruleToSql: alias ${JSON.stringify(alias)} is not a plain identifier`);
  const column = (name: string) => `${alias}.${name}`;
  const param = (value: unknown, type: string) => `$${params.push(value)}::${type}`;
  const negate = criteria.matchNegate ?? [];
  const set = (field: CriterionField) => isCriterionSet(criteria, field);
  const present = (col: string) => `COALESCE(${col}, '') <> ''`;
  const folded = (col: string) => `lower(${col} COLLATE "C")`;
  const criterion = (col: string, key: NegatableKey, test: string) =>
    `(${present(col)} AND ${negate.includes(key) ? 'NOT ' : ''}(${test}))`;

  // A rule matches requests of the one flow type it governs (never tech_jit_admin), as in the engine.
  const parts = [`COALESCE(${column('flow_type')}::text = ${param(ruleFlowType(criteria), 'text')}, FALSE)`];

  if (criteria.siteId) {
    const siteId = column('site_id');
    parts.push(`(${siteId} IS NOT NULL AND lower(${siteId}::text) = ${param(asciiLower(criteria.siteId), 'text')})`);
  }
  if (set('matchRiskTier')) {
    const tier = column('risk_tier');
    const not = negate.includes('riskTier') ? 'NOT ' : '';
    parts.push(`(${tier} IS NOT NULL AND ${not}(${tier} = ${param(criteria.matchRiskTier, 'int')}))`);
  }
  const exact = (field: CriterionField, key: NegatableKey, name: string) => {
    if (!set(field)) return;
    const col = column(name);
    parts.push(criterion(col, key, `${folded(col)} = ${param(asciiLower(criteria[field] as string), 'text')}`));
  };
  exact('matchToolName', 'toolName', 'tool_name');
  exact('matchSigner', 'signer', 'target_executable_signer');
  exact('matchHash', 'hash', 'target_executable_hash');
  exact('matchUser', 'user', 'subject_username');

  if (set('matchSignerGroupId')) {
    const members = criteria.signerGroupSigners;
    if (!members) throw new Error('ruleToSql: matchSignerGroupId is set but signerGroupSigners were not resolved');
    const col = column('target_executable_signer');
    parts.push(criterion(col, 'signerGroup', `${folded(col)} = ANY(${param(members.map(asciiLower), 'text[]')})`));
  }
  if (set('matchAdGroup')) {
    // Stored requests keep no directory groups: the value is always missing, so the criterion never holds.
    parts.push('FALSE');
  }
  if (set('matchCommandLine')) {
    const col = column('command_line');
    const needle = param(asciiLower(criteria.matchCommandLine!), 'text');
    parts.push(criterion(col, 'commandLine', `strpos(${folded(col)}, ${needle}) > 0`));
  }
  const glob = (field: CriterionField, key: NegatableKey, name: string) => {
    if (!set(field)) return;
    const col = column(name);
    const regex = param(globToPosixRegex(criteria[field] as string), 'text');
    parts.push(criterion(col, key, `(replace(${col}, chr(92), '/') COLLATE "C") ~* ${regex}`));
  };
  glob('matchPathGlob', 'pathGlob', 'target_executable_path');
  glob('matchParentImage', 'parentImage', 'parent_image');

  if (criteria.timeWindow !== null && criteria.timeWindow !== undefined) {
    const window = compileTimeWindow(criteria.timeWindow);
    const requestedAt = column('requested_at');
    const local = `(${requestedAt} AT TIME ZONE ${param(window.timezone, 'text')})`;
    const minute = `(EXTRACT(HOUR FROM ${local}) * 60 + EXTRACT(MINUTE FROM ${local}))::int`;
    const weekday = `EXTRACT(DOW FROM ${local})::int`;
    const start = param(window.startMinute, 'int');
    const end = param(window.endMinute, 'int');
    const allDays = window.dayMask === 0b1111111;
    const days = allDays ? '' : param(daysOf(window.dayMask), 'int[]');
    const on = (day: string) => (allDays ? 'TRUE' : `${day} = ANY(${days})`);
    const test =
      window.startMinute <= window.endMinute
        ? `(${minute} BETWEEN ${start} AND ${end}) AND ${on(weekday)}`
        : `(${minute} >= ${start} AND ${on(weekday)}) OR (${minute} <= ${end} AND ${on(`((${weekday} + 6) % 7)`)})`;
    parts.push(`(${requestedAt} IS NOT NULL AND (${test}))`);
  }
  return `(${parts.join(' AND ')})`;
}

function daysOf(mask: number): number[] {
  return [0, 1, 2, 3, 4, 5, 6].filter((day) => (mask & (1 << day)) !== 0);
}

/** A stored elevation request as `ruleToSql` reads it (column names of the table). */
export interface StoredObservationRow {
  flow_type: FlowType;
  site_id: string | null;
  target_executable_signer: string | null;
  target_executable_hash: string | null;
  target_executable_path: string | null;
  parent_image: string | null;
  command_line: string | null;
  subject_username: string | null;
  tool_name: string | null;
  risk_tier: number | null;
  requested_at: Date;
}

/** The observation `matchesRule` must see for a stored row to agree with `ruleToSql`. */
export function observationFromRow(row: StoredObservationRow): Observation {
  return {
    flowType: row.flow_type,
    siteId: row.site_id,
    signer: row.target_executable_signer,
    hash: row.target_executable_hash,
    path: row.target_executable_path,
    parentImage: row.parent_image,
    commandLine: row.command_line,
    user: row.subject_username,
    adGroups: [],
    toolName: row.tool_name,
    riskTier: row.risk_tier,
    at: row.requested_at,
  };
}
