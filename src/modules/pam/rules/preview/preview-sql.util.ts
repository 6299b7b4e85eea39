import { compileGlobPattern, globToPosixRegex, type GlobSegment } from '../engine/glob.util';
import { isCriterionSet } from '../engine/rule-shape.util';
import { ruleToSql, type SqlRuleInput } from '../engine/rule-sql.util';
import type { CriterionField, NegatableKey } from '../engine/rule.types';

const LIKE_SPECIAL = /[\\%_]/g;
const escapeLike = (text: string) => text.replace(LIKE_SPECIAL, '\\$&');
/** The token codes `compileGlobPattern` uses for `*` and `?` inside a segment (code points are never negative). */
const STAR_TOKEN = -1;
const ONE_TOKEN = -2;

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
    this.out += escapeLike(value);
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
  // Both `*` and `?` become `%`, a superset of each.
  for (const token of segment.tokens!) {
    if (token === STAR_TOKEN || token === ONE_TOKEN) like.any();
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

/**
 * One glob segment as a LIKE pattern of exactly that segment, for a value that holds no
 * separator: `*` as `%`, `?` (one code point) as `_`, which in a UTF-8 database also matches
 * one character.
 */
function segmentPattern(segment: GlobSegment): string {
  if (segment.literal !== null) return escapeLike(segment.literal);
  let out = '';
  for (const token of segment.tokens!) out += token === STAR_TOKEN ? '%' : token === ONE_TOKEN ? '_' : escapeLike(String.fromCodePoint(token));
  return out;
}

/**
 * The glob test without a regular expression, when the glob has at most one `**` segment
 * (null otherwise). `v` is the value as the engine normalises it, `lower(replace(col, '\',
 * '/'))` under the C collation; `segments(v)` its parts between slashes.
 *
 * - No `**`: v has exactly n - 1 slashes and `v LIKE s1/s2/…/sn`, each segment's `*` as `%`
 *   and `?` as `_`. The pattern's n - 1 literal slashes must then meet the n - 1 slashes of v,
 *   so no wildcard can match a slash: exactly the segment-by-segment match.
 * - One `**` between p leading and s trailing segments: v has at least p + s segments, its
 *   first p segments (`split_part(v, '/', i)`) and last s segments (negative positions) each
 *   match their pattern. `**` alone matches every value.
 *
 * Each such test costs a fraction of PostgreSQL's per-call regular-expression overhead
 * (several microseconds); the agreement property test proves it equal to `ruleToSql`'s.
 */
function exactGlobSql(glob: string, column: string, params: unknown[]): string | null {
  const segments = compileGlobPattern(glob).segments;
  const globstars = segments.filter((segment) => segment.globstar).length;
  if (globstars > 1) return null;
  const p = (value: unknown, type: string) => `$${params.push(value)}::${type}`;
  const value = `lower(replace(${column}, chr(92), '/') COLLATE "C")`;
  const separators = `(length(${column}) - length(translate(${column}, '/' || chr(92), '')))`;
  if (globstars === 0) {
    return `(${separators} = ${p(segments.length - 1, 'int')} AND ${value} LIKE ${p(segments.map(segmentPattern).join('/'), 'text')})`;
  }
  const at = segments.findIndex((segment) => segment.globstar);
  const leading = segments.slice(0, at);
  const trailing = segments.slice(at + 1);
  if (leading.length + trailing.length === 0) return 'TRUE';
  const parts = [`${separators} >= ${p(leading.length + trailing.length - 1, 'int')}`];
  leading.forEach((segment, i) => parts.push(`split_part(${value}, '/', ${i + 1}) LIKE ${p(segmentPattern(segment), 'text')}`));
  trailing.forEach((segment, j) => parts.push(`split_part(${value}, '/', ${j - trailing.length}) LIKE ${p(segmentPattern(segment), 'text')}`));
  return `(${parts.join(' AND ')})`;
}

/** The glob criterion on one column: present, and matching (or, negated, not matching). */
function globCriterionSql(glob: string, negated: boolean, column: string, params: unknown[]): string {
  const present = `COALESCE(${column}, '') <> ''`;
  const exact = exactGlobSql(glob, column, params) ?? `((replace(${column}, chr(92), '/') COLLATE "C") ~* $${params.push(globToPosixRegex(glob))}::text)`;
  if (negated) return `(${present} AND NOT ${exact})`;
  const prefilter = `lower(${column} COLLATE "C") LIKE $${params.push(globLikePattern(glob))}::text`;
  return `(${present} AND ${prefilter} AND ${exact})`;
}

const GLOBS: readonly [CriterionField, NegatableKey, string][] = [
  ['matchPathGlob', 'pathGlob', 'target_executable_path'],
  ['matchParentImage', 'parentImage', 'parent_image'],
];

/**
 * The preview's match expression over the elevation-request row `alias`: true exactly when
 * `ruleToSql` is, and never NULL. PostgreSQL's regular expressions cost several microseconds
 * per call, so a rule with globs is evaluated as
 *
 *   (criteria without globs and window) AND (glob tests) [AND (criteria without globs)]
 *
 * where each glob test is its presence, a LIKE prefilter (a necessary condition, see
 * `globLikePattern`) and the exact test of `exactGlobSql`, falling back to the engine's
 * regular expression for globs with several `**`. The last conjunct repeats the cheap
 * criteria only to add the time window after the glob tests. AND evaluates left to right and
 * stops at the first false, so most rows are settled by a few equality or LIKE tests.
 * Parameters are appended to `params`.
 */
export function previewMatchSql(criteria: SqlRuleInput, alias: string, params: unknown[]): string {
  const negate = criteria.matchNegate ?? [];
  const globs = GLOBS.filter(([field]) => isCriterionSet(criteria, field));
  if (globs.length === 0) return ruleToSql(criteria, alias, params);
  const withoutGlobs: SqlRuleInput = { ...criteria, matchPathGlob: null, matchParentImage: null };
  const hasWindow = criteria.timeWindow !== null && criteria.timeWindow !== undefined;
  const parts = [ruleToSql(hasWindow ? { ...withoutGlobs, timeWindow: null } : withoutGlobs, alias, params)];
  for (const [field, key, column] of globs) parts.push(globCriterionSql(criteria[field] as string, negate.includes(key), `${alias}.${column}`, params));
  if (hasWindow) parts.push(ruleToSql(withoutGlobs, alias, params));
  return `(${parts.join(' AND ')})`;
}
