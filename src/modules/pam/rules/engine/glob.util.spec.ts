import fc from 'fast-check';
import { compileGlob, compileGlobPattern, globToPosixRegex, matchGlobSegments, toGlobSegments } from './glob.util';

/**
 * An independent statement of the glob semantics: plain recursion over segments and
 * code points, exponential but obviously right on the short inputs used here.
 */
function referenceMatch(glob: string, value: string): boolean {
  const fold = (text: string) => text.replace(/\\/g, '/').replace(/[A-Z]/g, (c) => c.toLowerCase());
  const patternSegments = fold(glob).split('/');
  const valueSegments = fold(value).split('/');
  const segment = (pattern: string[], text: string[]): boolean => {
    if (pattern.length === 0) return text.length === 0;
    const [head, ...rest] = pattern;
    if (head === '*') return segment(rest, text) || (text.length > 0 && segment(pattern, text.slice(1)));
    if (text.length === 0) return false;
    return (head === '?' || head === text[0]) && segment(rest, text.slice(1));
  };
  const segments = (i: number, j: number): boolean => {
    if (i === patternSegments.length) return j === valueSegments.length;
    if (/^\*{2,}$/.test(patternSegments[i])) {
      for (let k = j; k <= valueSegments.length; k++) if (segments(i + 1, k)) return true;
      return false;
    }
    return (
      j < valueSegments.length &&
      segment([...patternSegments[i]], [...valueSegments[j]]) &&
      segments(i + 1, j + 1)
    );
  };
  return segments(0, 0);
}

function regexMatch(glob: string, value: string): boolean {
  return new RegExp(globToPosixRegex(glob), 'u').test(toGlobSegments(value).join('/'));
}

const SPECIALS = ['\\', '/', '*', '?', '.', '(', ')', '[', ']', '+', '$', '^', '{', '}', '|'];
const globAlphabet = fc.constantFrom(...SPECIALS, '**', 'a', 'b', 'A', 'B', 'é', 'É', '😀', ' ', '-');
const valueAlphabet = fc.constantFrom(...SPECIALS, 'a', 'b', 'A', 'B', 'é', 'É', '😀', ' ', '-');
const globTokensArb = fc.array(globAlphabet, { maxLength: 8 });
const globArb = globTokensArb.map((parts) => parts.join(''));
const valueArb = fc.array(valueAlphabet, { maxLength: 10 }).map((parts) => parts.join(''));

const withinSegment = fc.array(fc.constantFrom('a', 'B', '.', '😀', '*'), { maxLength: 3 }).map((p) => p.join(''));
const acrossSegments = fc.array(fc.constantFrom('a', 'B', '/', '\\'), { maxLength: 4 }).map((p) => p.join(''));

/** A glob with a value built along it, so that the properties see matches as well as misses. */
const globWithFittingValueArb = globTokensArb.chain((tokens) =>
  fc
    .tuple(
      ...tokens.map((token) => {
        if (token === '**') return acrossSegments;
        if (token === '*') return withinSegment;
        if (token === '?') return fc.constantFrom('a', 'Z', '.', '😀', '*');
        if (token === '/' || token === '\\') return fc.constantFrom('/', '\\');
        return fc.constantFrom(token, token.toUpperCase());
      }),
    )
    .map((parts) => [tokens.join(''), parts.join('')] as const),
);

describe('compileGlob', () => {
  const matches = (glob: string, value: string) => compileGlob(glob)(value);

  it('matches one segment with * and never crosses a separator', () => {
    expect(matches('C:\\Windows\\System32\\*.exe', 'C:\\Windows\\System32\\cmd.exe')).toBe(true);
    expect(matches('C:\\Windows\\System32\\*.exe', 'C:\\Windows\\System32\\.exe')).toBe(true);
    expect(matches('C:\\Windows\\System32\\*.exe', 'C:\\Windows\\System32\\sub\\cmd.exe')).toBe(false);
    expect(matches('C:\\Windows\\*', 'C:\\Windows\\a/b')).toBe(false);
  });

  it('lets ** match zero segments, so C:\\**\\x.exe matches C:\\x.exe', () => {
    expect(matches('C:\\**\\x.exe', 'C:\\x.exe')).toBe(true);
    expect(matches('C:\\**\\x.exe', 'C:\\a\\x.exe')).toBe(true);
    expect(matches('C:\\**\\x.exe', 'C:\\a\\b\\c\\x.exe')).toBe(true);
    expect(matches('C:\\**\\x.exe', 'D:\\x.exe')).toBe(false);
    expect(matches('C:\\**\\x.exe', 'C:\\a\\y.exe')).toBe(false);
    expect(matches('C:\\**\\x.exe', 'C:x.exe')).toBe(false);
  });

  it('lets a leading ** match any number of leading segments, including none', () => {
    expect(matches('**\\setup.exe', 'setup.exe')).toBe(true);
    expect(matches('**\\setup.exe', 'C:\\Users\\bob\\Downloads\\setup.exe')).toBe(true);
    expect(matches('**\\setup.exe', 'C:\\Users\\bob\\Downloads\\my-setup.exe')).toBe(false);
  });

  it('lets a trailing ** match the folder itself and everything beneath it', () => {
    expect(matches('C:\\Tools\\**', 'C:\\Tools')).toBe(true);
    expect(matches('C:\\Tools\\**', 'C:\\Tools\\')).toBe(true);
    expect(matches('C:\\Tools\\**', 'C:\\Tools\\a\\b\\c.exe')).toBe(true);
    expect(matches('C:\\Tools\\**', 'C:\\Toolsmith\\a.exe')).toBe(false);
  });

  it('lets a lone ** match anything, including the empty string', () => {
    expect(matches('**', '')).toBe(true);
    expect(matches('**', 'C:\\a\\b')).toBe(true);
    expect(matches('**', '\\\\server\\share')).toBe(true);
  });

  it('treats consecutive ** segments as one', () => {
    expect(matches('C:\\**\\**\\x.exe', 'C:\\x.exe')).toBe(true);
    expect(matches('C:\\**\\**\\x.exe', 'C:\\a\\b\\x.exe')).toBe(true);
  });

  it('treats ** inside a segment like *, which stays within the segment', () => {
    expect(matches('C:\\Program**\\app.exe', 'C:\\Program Files\\app.exe')).toBe(true);
    expect(matches('C:\\Program**\\app.exe', 'C:\\Program Files\\Vendor\\app.exe')).toBe(false);
    expect(matches('a***b', 'axyzb')).toBe(true);
  });

  it('matches exactly one non-separator character with ?', () => {
    expect(matches('a?c', 'abc')).toBe(true);
    expect(matches('a?c', 'ac')).toBe(false);
    expect(matches('a?c', 'abbc')).toBe(false);
    expect(matches('a?c', 'a/c')).toBe(false);
    expect(matches('a?c', 'a\\c')).toBe(false);
    expect(matches('a?c', 'a.c')).toBe(true);
  });

  it('counts a character outside the Basic Multilingual Plane as one character for ?', () => {
    expect(matches('a?c', 'a😀c')).toBe(true);
    expect(matches('a??c', 'a😀c')).toBe(false);
  });

  it('is anchored at both ends', () => {
    expect(matches('cmd.exe', 'C:\\Windows\\cmd.exe')).toBe(false);
    expect(matches('cmd.exe', 'cmd.exe.bak')).toBe(false);
    expect(matches('cmd.exe', 'xcmd.exe')).toBe(false);
    expect(matches('cmd.exe', 'cmd.exe')).toBe(true);
  });

  it('treats \\ and / as the same separator, in the glob and in the value', () => {
    expect(matches('C:/Apps/a.exe', 'C:\\Apps\\a.exe')).toBe(true);
    expect(matches('C:\\Apps\\a.exe', 'C:/Apps/a.exe')).toBe(true);
    expect(matches('C:\\Apps/a.exe', 'C:/Apps\\a.exe')).toBe(true);
    expect(matches('\\\\server\\share\\*.exe', '//server/share/tool.exe')).toBe(true);
    expect(matches('\\\\server\\share\\*.exe', '\\server\\share\\tool.exe')).toBe(false);
  });

  it('ignores the case of ASCII letters', () => {
    expect(matches('C:\\WINDOWS\\*.EXE', 'c:\\windows\\notepad.exe')).toBe(true);
    expect(matches('c:\\windows\\notepad.exe', 'C:\\WINDOWS\\NOTEPAD.EXE')).toBe(true);
  });

  it('does not fold letters outside ASCII, as PostgreSQL under the C collation does not', () => {
    expect(matches('C:\\Données\\*.exe', 'c:\\données\\a.exe')).toBe(true);
    expect(matches('C:\\DONNÉES\\*.exe', 'C:\\données\\a.exe')).toBe(false);
  });

  it('reads every character other than *, ? and the separators literally', () => {
    const glob = 'C:\\Program Files (x86)\\App[1]\\a+b$^{2}|c.exe';
    expect(matches(glob, 'c:/program files (x86)/app[1]/A+B$^{2}|C.EXE')).toBe(true);
    expect(matches(glob, 'C:\\Program Files x86\\App1\\ab2c.exe')).toBe(false);
    expect(matches('a.exe', 'abexe')).toBe(false);
    expect(matches('a+.exe', 'aa.exe')).toBe(false);
    expect(matches('[ab].exe', 'a.exe')).toBe(false);
    expect(matches('[ab].exe', '[ab].exe')).toBe(true);
    expect(matches('a|b', 'a')).toBe(false);
    expect(matches('x{2}', 'xx')).toBe(false);
    expect(matches('^a$', '^a$')).toBe(true);
  });

  it('never backtracks exponentially on a hostile glob', () => {
    const started = Date.now();
    expect(matches('*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(5000))).toBe(false);
    expect(matches('**\\a\\**\\a\\**\\a\\**\\a\\**\\b', Array(400).fill('a').join('\\'))).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('agrees with a plain recursive statement of the semantics', () => {
    fc.assert(
      fc.property(globArb, valueArb, (glob, value) => compileGlob(glob)(value) === referenceMatch(glob, value)),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(globWithFittingValueArb, ([glob, value]) => compileGlob(glob)(value) === referenceMatch(glob, value)),
      { numRuns: 3000 },
    );
  });

});

describe('matchGlobSegments', () => {
  it('gives the same answer as compileGlob on values split by toGlobSegments', () => {
    const pattern = compileGlobPattern('C:\\**\\bin\\*.exe');
    expect(matchGlobSegments(pattern, toGlobSegments('c:/x/BIN/a.exe'))).toBe(true);
    expect(matchGlobSegments(pattern, toGlobSegments('c:/x/lib/a.exe'))).toBe(false);
  });

  it('records the plain segments that let rules be indexed', () => {
    expect(compileGlobPattern('C:\\Apps\\Vendor\\*.exe').anchoredLiteral).toEqual({ position: 2, literal: 'vendor' });
    expect(compileGlobPattern('C:\\*\\**\\x.exe').anchoredLiteral).toEqual({ position: 0, literal: 'c:' });
    expect(compileGlobPattern('**\\X.exe').anchoredLiteral).toBeNull();
    expect(compileGlobPattern('**\\X.exe').lastLiteral).toBe('x.exe');
    expect(compileGlobPattern('C:\\Apps\\*.exe').lastLiteral).toBeNull();
  });
});

describe('globToPosixRegex', () => {
  it('turns ** segments into optional segment runs and escapes punctuation', () => {
    expect(globToPosixRegex('C:\\**\\x.exe')).toBe('^c:(?:/[^/]*)*/x\\.exe$');
    expect(globToPosixRegex('**\\X.exe')).toBe('^(?:[^/]*/)*x\\.exe$');
    expect(globToPosixRegex('C:\\Tools\\**')).toBe('^c:/tools(?:/[^/]*)*$');
    expect(globToPosixRegex('**')).toBe('^[^/]*(?:/[^/]*)*$');
    expect(globToPosixRegex('a?b*c')).toBe('^a[^/]b[^/]*c$');
    expect(globToPosixRegex('(x86)[1]+$^{2}|.')).toBe('^\\(x86\\)\\[1\\]\\+\\$\\^\\{2\\}\\|\\.$');
  });

  it('never puts a backslash before a letter or digit, which PostgreSQL reads as a class escape', () => {
    fc.assert(
      fc.property(globArb, (glob) => !/\\[\p{L}\p{N}]/u.test(globToPosixRegex(glob).replace(/\\\\/g, ''))),
      { numRuns: 2000 },
    );
  });

  it('agrees with compileGlob when applied to the normalised value, as the SQL side applies it', () => {
    fc.assert(
      fc.property(globArb, valueArb, (glob, value) => compileGlob(glob)(value) === regexMatch(glob, value)),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(globWithFittingValueArb, ([glob, value]) => compileGlob(glob)(value) === regexMatch(glob, value)),
      { numRuns: 3000 },
    );
  });

  it('agrees with compileGlob under the i flag on ASCII-only input', () => {
    const asciiGlob = fc
      .array(fc.constantFrom(...SPECIALS, '**', 'a', 'B', '.'), { maxLength: 8 })
      .map((p) => p.join(''));
    const asciiValue = fc.array(fc.constantFrom(...SPECIALS, 'A', 'b', '.'), { maxLength: 10 }).map((p) => p.join(''));
    fc.assert(
      fc.property(asciiGlob, asciiValue, (glob, value) => {
        const regex = new RegExp(globToPosixRegex(glob), 'i');
        return compileGlob(glob)(value) === regex.test(value.replace(/\\/g, '/'));
      }),
      { numRuns: 3000 },
    );
  });
});
