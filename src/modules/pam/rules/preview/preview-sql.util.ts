import { compileGlobPattern, type GlobSegment } from '../engine/glob.util';
import { isCriterionSet } from '../engine/rule-shape.util';
import { ruleToSql, type SqlRuleInput } from '../engine/rule-sql.util';
import type { CriterionField, NegatableKey } from '../engine/rule.types';

const LIKE_SPECIAL = /[\\%_]/g;

/** Builds a LIKE pattern, writing one `%` for any run of wildcards. */
class LikeBuilder {
  private out = '';
  private wildcard = false;

  any(): void {
    if (!this.wildcard) this.out += '%';
    this.wildcard = true;
  }

  separator(): void {
    this.out += '_';
    this.wildcard = false;
  }

  text(value: string): void {
    if (value === '') return;
    this.out += value.replace(LIKE_SPECIAL, '\\$&');
    this.wildcard = false;
  }

  toString(): string {
    return this.out;
  }
}

function appendSegment(like: LikeBuilder, segment: GlobSegment): void {
  if (segment.literal !== null) {
    like.text(segment.literal);
    return;
  }
  // Wildcard tokens are negative; both `*` and `?` become `%`, a superset of each.
  for (const token of segment.tokens!) {
    if (token < 0) like.any();
    else like.text(String.fromCodePoint(token));
  }
}

/**
 * A LIKE pattern every value matched by the glob also matches (a necessary condition, never
 * a sufficient one), for `lower(col COLLATE "C")`: the value folded as the engine folds it
 * (ASCII letters only) but with its separators as stored. Each wildcard and each `**`
 * segment becomes `%`, and each separator `_` (one character: `\` or `/`), so the pattern
 * accepts a superset of the glob without the per-row `replace` the exact match needs; literal
 * text stays, in lower case. Segments never contain a separator, so no literal `/` or `\`
 * remains to be matched.
 */
export function globLikePattern(glob: string): string {
  const segments = compileGlobPattern(glob).segments;
  const like = new LikeBuilder();
  segments.forEach((segment, index) => {
    if (segment.globstar) {
      like.any();
      return;
    }
    if (index > 0 && !segments[index - 1].globstar) like.separator();
    appendSegment(like, segment);
  });
  return like.toString();
}

const GLOBS: readonly [CriterionField, NegatableKey, string][] = [
  ['matchPathGlob', 'pathGlob', 'target_executable_path'],
  ['matchParentImage', 'parentImage', 'parent_image'],
];

/**
 * The preview's match expression over the elevation-request row `alias`: true exactly when
 * `ruleToSql` is. PostgreSQL's regular expressions cost microseconds per row, so when the
 * rule has a glob that is not negated, cheaper necessary conditions run first and the
 * regular expression only sees the rows that pass them:
 *
 *   (criteria without globs and window) AND (LIKE prefilter per glob) AND (the full rule)
 *
 * Every conjunct before the full rule is implied by it, so the conjunction equals the full
 * rule; AND evaluates left to right and stops at the first false. Parameters are appended.
 */
export function previewMatchSql(criteria: SqlRuleInput, alias: string, params: unknown[]): string {
  const negate = criteria.matchNegate ?? [];
  const prefilters = GLOBS.filter(([field, key]) => isCriterionSet(criteria, field) && !negate.includes(key)).map(([field, , column]) => {
    const pattern = globLikePattern(criteria[field] as string);
    return `(lower(${alias}.${column} COLLATE "C") LIKE $${params.push(pattern)}::text)`;
  });
  if (prefilters.length === 0) return ruleToSql(criteria, alias, params);
  const cheap = ruleToSql({ ...criteria, matchPathGlob: null, matchParentImage: null, timeWindow: null }, alias, params);
  const full = ruleToSql(criteria, alias, params);
  return `(${cheap} AND ${prefilters.join(' AND ')} AND ${full})`;
}
