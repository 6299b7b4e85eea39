import { asciiLower, intern } from './text.util';

/**
 * Path globs for `matchPathGlob` and `matchParentImage` (docs/pam-rules.md, "Matching").
 *
 * Semantics, for a glob G and a value V:
 * - Both are normalised the same way: every `\` becomes `/`, and A-Z fold to a-z
 *   (ASCII only, see `asciiLower`). Both are then split on `/` into segments.
 * - The match is anchored at both ends: G must describe the whole of V.
 * - A segment of G made only of two or more `*` (`**`) matches zero or more whole
 *   segments of V, so `C:\**\x.exe` matches `C:\x.exe` and `C:\a\b\x.exe`, and
 *   `C:\Tools\**` matches `C:\Tools`, `C:\Tools\` and everything beneath.
 * - Any other segment of G matches exactly one segment of V. Inside it, `*` (and any
 *   run of `*`, as in `a**b`) matches zero or more characters, `?` exactly one
 *   character (a Unicode code point), and every other character only itself: `.`,
 *   `(`, `[`, `+`, `$`, `^`, `{`, `|` and the rest have no special meaning.
 *
 * The JavaScript matcher below walks segments with the classic last-star
 * backtracking algorithm instead of a regular expression, so a hostile glob such as
 * `*a*a*a*a*a*b` cannot make the ingest path backtrack exponentially. The SQL side
 * uses the equivalent regular expression from `globToPosixRegex`.
 */

const STAR = -1;
const ONE = -2;

export interface GlobSegment {
  readonly globstar: boolean;
  /** Set when the segment has no wildcard: compared with `===`. */
  readonly literal: string | null;
  /** Code points, with STAR and ONE for the wildcards, when `literal` is null. */
  readonly tokens: Int32Array | null;
}

export interface GlobPattern {
  readonly source: string;
  readonly segments: readonly GlobSegment[];
  readonly hasGlobstar: boolean;
  /** Segments that are not `**`: a value with fewer segments cannot match. */
  readonly minSegments: number;
  /**
   * The last segment when it is plain text: it can only match a value's last segment,
   * so a value whose last segment differs cannot match (used to index rules).
   */
  readonly lastLiteral: string | null;
  /** The last segment unless it is `**`: it can only meet the value's last segment, a cheap first test. */
  readonly lastFixed: GlobSegment | null;
  /**
   * The deepest plain-text segment before any `**`, with its position: segments before
   * the first `**` each meet the value's segment at the same position, so a value
   * whose segment there differs cannot match (used to index rules).
   */
  readonly anchoredLiteral: { readonly position: number; readonly literal: string } | null;
}

const GLOBSTAR_SEGMENT = /^\*{2,}$/;
const BACKSLASHES = /\\/g;

function compileSegment(text: string): GlobSegment {
  if (GLOBSTAR_SEGMENT.test(text)) return { globstar: true, literal: null, tokens: null };
  if (!text.includes('*') && !text.includes('?')) return { globstar: false, literal: text, tokens: null };
  const tokens: number[] = [];
  for (const char of text) {
    if (char === '*') {
      if (tokens[tokens.length - 1] !== STAR) tokens.push(STAR);
    } else if (char === '?') {
      tokens.push(ONE);
    } else {
      tokens.push(char.codePointAt(0)!);
    }
  }
  return { globstar: false, literal: null, tokens: Int32Array.from(tokens) };
}

/** Consecutive `**` segments mean the same as one; after collapsing, a leading `**` is followed by a plain segment. */
function collapseGlobstars(segments: GlobSegment[]): GlobSegment[] {
  return segments.filter((segment, index) => !(segment.globstar && index > 0 && segments[index - 1].globstar));
}

export function compileGlobPattern(glob: string): GlobPattern {
  const segments = collapseGlobstars(toGlobSegments(glob).map(compileSegment));
  const fixedSegments = segments.filter((segment) => !segment.globstar);
  const last = segments[segments.length - 1];
  let anchoredLiteral: GlobPattern['anchoredLiteral'] = null;
  for (let position = 0; position < segments.length && !segments[position].globstar; position++) {
    const literal = segments[position].literal;
    if (literal !== null) anchoredLiteral = { position, literal };
  }
  return {
    source: glob,
    segments,
    hasGlobstar: fixedSegments.length < segments.length,
    minSegments: fixedSegments.length,
    lastLiteral: last.literal,
    lastFixed: last.globstar ? null : last,
    anchoredLiteral,
  };
}

/** The normalised segments of a value, as the matcher expects them. Compute once per value. */
export function toGlobSegments(value: string): string[] {
  return asciiLower(value.replace(BACKSLASHES, '/')).split('/').map(intern);
}

function step(text: string, index: number): number {
  return text.codePointAt(index)! > 0xffff ? 2 : 1;
}

function matchSegmentTokens(tokens: Int32Array, text: string): boolean {
  const tokenCount = tokens.length;
  const length = text.length;
  let t = 0;
  let i = 0;
  let starToken = -1;
  let starIndex = 0;
  while (i < length) {
    if (t < tokenCount) {
      const token = tokens[t];
      if (token === STAR) {
        starToken = t++;
        starIndex = i;
        continue;
      }
      const codePoint = text.codePointAt(i)!;
      if (token === ONE || token === codePoint) {
        i += codePoint > 0xffff ? 2 : 1;
        t++;
        continue;
      }
    }
    if (starToken < 0) return false;
    t = starToken + 1;
    starIndex += step(text, starIndex);
    i = starIndex;
  }
  while (t < tokenCount && tokens[t] === STAR) t++;
  return t === tokenCount;
}

function matchSegment(segment: GlobSegment, text: string): boolean {
  return segment.literal !== null ? segment.literal === text : matchSegmentTokens(segment.tokens!, text);
}

/** Matches pre-split value segments (from `toGlobSegments`) against a compiled glob. */
export function matchGlobSegments(pattern: GlobPattern, values: readonly string[]): boolean {
  const segments = pattern.segments;
  const segmentCount = segments.length;
  const valueCount = values.length;
  if (valueCount < pattern.minSegments) return false;
  if (pattern.lastFixed !== null && !matchSegment(pattern.lastFixed, values[valueCount - 1])) return false;
  if (!pattern.hasGlobstar) {
    if (segmentCount !== valueCount) return false;
    for (let s = 0; s < segmentCount; s++) {
      if (!matchSegment(segments[s], values[s])) return false;
    }
    return true;
  }
  // `**` is to segments what `*` is to characters, so the same last-star backtracking
  // applies one level up; it is exact whatever the per-segment predicate is.
  let s = 0;
  let v = 0;
  let starSegment = -1;
  let starValue = 0;
  while (v < valueCount) {
    if (s < segmentCount) {
      const segment = segments[s];
      if (segment.globstar) {
        starSegment = s++;
        starValue = v;
        continue;
      }
      if (matchSegment(segment, values[v])) {
        s++;
        v++;
        continue;
      }
    }
    if (starSegment < 0) return false;
    s = starSegment + 1;
    v = ++starValue;
  }
  while (s < segmentCount && segments[s].globstar) s++;
  return s === segmentCount;
}

export function compileGlob(glob: string): (value: string) => boolean {
  const pattern = compileGlobPattern(glob);
  return (value: string) => matchGlobSegments(pattern, toGlobSegments(value));
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g;

function segmentToRegex(segment: GlobSegment): string {
  if (segment.literal !== null) return segment.literal.replace(REGEX_SPECIAL, '\\$&');
  let out = '';
  for (const token of segment.tokens!) {
    if (token === STAR) out += '[^/]*';
    else if (token === ONE) out += '[^/]';
    else out += String.fromCodePoint(token).replace(REGEX_SPECIAL, '\\$&');
  }
  return out;
}

/**
 * The glob as a regular expression that PostgreSQL (ARE syntax) and JavaScript read
 * the same way, for the preview query. It keeps to constructs both engines share:
 * `^`, `$`, `[^/]`, `*`, non-capturing `(?:…)` groups and backslash-escaped
 * punctuation (never a backslash before a letter or digit, which ARE reads as a class
 * escape). Letters are emitted in lower case.
 *
 * The SQL side must apply it to the value with backslashes turned into slashes and
 * ASCII-only case folding, which is what the C collation gives:
 *
 *   replace(col, chr(92), '/') COLLATE "C" ~* $1
 *
 * (`chr(92)` is a backslash and does not depend on `standard_conforming_strings`.)
 * Equivalently `lower(replace(col, chr(92), '/') COLLATE "C") ~ $1`. A NULL or empty
 * column is missing data and must be excluded separately. The JavaScript twin is
 * `new RegExp(pattern, 'u').test(toGlobSegments(value).join('/'))`; the `u` flag
 * makes `[^/]` consume a whole code point, as PostgreSQL does.
 */
export function globToPosixRegex(glob: string): string {
  const segments = compileGlobPattern(glob).segments;
  let out = '^';
  let index = 0;
  if (segments[0].globstar) {
    if (segments.length === 1) return '^[^/]*(?:/[^/]*)*$';
    out += '(?:[^/]*/)*' + segmentToRegex(segments[1]);
    index = 2;
  } else {
    out += segmentToRegex(segments[0]);
    index = 1;
  }
  for (; index < segments.length; index++) {
    out += segments[index].globstar ? '(?:/[^/]*)*' : '/' + segmentToRegex(segments[index]);
  }
  return out + '$';
}
