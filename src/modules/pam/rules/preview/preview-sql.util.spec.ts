import fc from 'fast-check';
import { compileGlob } from '../engine/glob.util';
import { asciiLower } from '../engine/text.util';
import { globLikePattern, previewMatchSql } from './preview-sql.util';

/** JavaScript reading of a LIKE pattern (default escape `\`), for checking the prefilter's promise. */
function likeToRegExp(pattern: string): RegExp {
  let out = '^';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') out += pattern[++i].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (char === '%') out += '[\\s\\S]*';
    else if (char === '_') out += '[\\s\\S]';
    else out += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(out + '$', 'su');
}

const folded = (value: string) => asciiLower(value);

describe('globLikePattern', () => {
  it.each([
    ['C:\\Program Files\\Vendor*\\**\\setup*.exe', 'c:_program files_vendor%setup%.exe'],
    ['C:/Tools/**', 'c:_tools%'],
    ['**\\x.exe', '%x.exe'],
    ['C:\\a?c\\b.exe', 'c:_a%c_b.exe'],
    ['C:\\100%_done\\file.exe', 'c:_100\\%\\_done_file.exe'],
    ['**', '%'],
  ])('turns %s into %s', (glob, like) => {
    expect(globLikePattern(glob)).toBe(like);
  });

  it('accepts every value the glob matches (property)', () => {
    const segment = fc.stringMatching(/^[a-zA-Z0-9 ._%()\[\]$^+{}|?*-]{0,6}$/);
    const glob = fc.array(fc.oneof(segment, fc.constant('**')), { minLength: 1, maxLength: 5 }).map((parts) => parts.join('\\'));
    const value = fc
      .tuple(fc.array(fc.stringMatching(/^[a-zA-Z0-9 ._%()\[\]$^+{}|-]{0,6}$/), { minLength: 1, maxLength: 6 }), fc.constantFrom('\\', '/'))
      .map(([parts, separator]) => parts.join(separator));
    fc.assert(
      fc.property(glob, value, (g, v) => {
        if (compileGlob(g)(v)) expect(likeToRegExp(globLikePattern(g)).test(folded(v))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts every value built from the glob itself (property)', () => {
    const literal = fc.stringMatching(/^[a-zA-Z0-9 ._%()$-]{1,5}$/);
    fc.assert(
      fc.property(fc.array(literal, { minLength: 1, maxLength: 4 }), fc.array(literal, { maxLength: 3 }), fc.constantFrom('\\', '/'), (head, tail, separator) => {
        const glob = [...head, '**', ...tail, '*.exe'].join('\\');
        const value = [...head, 'x', 'y', ...tail, 'Setup.EXE'].join(separator);
        expect(compileGlob(glob)(value)).toBe(true);
        expect(likeToRegExp(globLikePattern(glob)).test(folded(value))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('previewMatchSql', () => {
  it('is ruleToSql alone when the rule has no glob', () => {
    const params: unknown[] = [];
    const sql = previewMatchSql({ matchSigner: 'Acme' }, 'er', params);
    expect(sql).not.toContain('LIKE');
    expect(params).toEqual(['uac_intercept', 'acme']);
  });

  it('tests a glob with at most one ** without a regular expression, after the cheap criteria', () => {
    const params: unknown[] = [];
    const sql = previewMatchSql({ matchSigner: 'Acme', matchPathGlob: 'C:\\Program Files\\Vendor*\\**\\setup?.exe' }, 'er', params);
    expect(sql).not.toContain('~*');
    expect(sql.indexOf('LIKE')).toBeGreaterThan(sql.indexOf('target_executable_signer'));
    expect(sql).toContain("split_part(lower(replace(er.target_executable_path, chr(92), '/') COLLATE \"C\"), '/', 3) LIKE");
    expect(sql).toContain("split_part(lower(replace(er.target_executable_path, chr(92), '/') COLLATE \"C\"), '/', -1) LIKE");
    expect(params).toEqual(expect.arrayContaining(['c:_program files_vendor%setup%.exe', 'c:', 'program files', 'vendor%', 'setup_.exe', 3]));
  });

  it('tests a glob without ** by its separator count and one LIKE', () => {
    const params: unknown[] = [];
    const sql = previewMatchSql({ matchPathGlob: 'C:\\Tools\\*.exe' }, 'er', params);
    expect(sql).not.toContain('~*');
    expect(params).toEqual(expect.arrayContaining([2, 'c:/tools/%.exe']));
  });

  it('falls back to the engine regular expression for a glob with several **', () => {
    const sql = previewMatchSql({ matchPathGlob: 'C:\\**\\bin\\**\\x.exe' }, 'er', []);
    expect(sql).toContain('~*');
  });

  it('tests a negated glob without a prefilter, and the time window after the globs', () => {
    const sql = previewMatchSql(
      { matchUser: 'bob', matchPathGlob: 'C:\\Tools\\*', matchNegate: ['pathGlob'], timeWindow: { start: '09:00', end: '17:00' } },
      'er',
      [],
    );
    expect(sql).toContain('AND NOT (');
    expect(sql).not.toContain('lower(er.target_executable_path COLLATE "C") LIKE');
    expect(sql.lastIndexOf('AT TIME ZONE')).toBeGreaterThan(sql.indexOf('AND NOT ('));
  });

  it('never puts values into the SQL text', () => {
    const hostile = "C:\\x'); DROP TABLE elevation_requests; --\\*";
    const params: unknown[] = [];
    const sql = previewMatchSql({ matchPathGlob: hostile, matchParentImage: hostile }, 'er', params);
    expect(sql).not.toMatch(/drop/i);
    expect(params.some((p) => typeof p === 'string' && /drop table/i.test(p))).toBe(true);
  });
});
