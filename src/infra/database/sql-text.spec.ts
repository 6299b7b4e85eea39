import { escapeLiteral as pgEscapeLiteral } from 'pg';
import { escapeLiteral, inline, literal, parseTemplate } from './sql-text';

describe('SQL templates of constant statements', () => {
  it('finds each placeholder with its parameter index, in order, repeats included', () => {
    const t = parseTemplate('SELECT * FROM t WHERE a = $2 AND b = $1 OR c = $2');
    expect(t.slots).toEqual([1, 0, 1]);
    expect(t.parts).toEqual(['SELECT * FROM t WHERE a = ', ' AND b = ', ' OR c = ', '']);
  });

  it('leaves dollar signs in strings, quoted identifiers, comments and dollar-quoted bodies alone', () => {
    const text = [
      "SELECT '$1', 'it''s $2', E'\\' $3', \"col$4\", \"a\"\"$5\", $$ $6 $$, $tag$ $7 $tag$, x$8",
      '-- $9 in a comment',
      '/* $10 /* nested $11 */ still $12 */ $1',
    ].join('\n');
    expect(parseTemplate(text).slots).toEqual([0]);
  });

  it('does not take a placeholder-like name inside an identifier or a longer token', () => {
    expect(parseTemplate('SELECT a$1, $1b, $1').slots).toEqual([0]);
  });

  it('refuses unterminated strings, identifiers, comments and dollar quotes', () => {
    expect(() => parseTemplate("SELECT 'open")).toThrow(/unterminated string/);
    expect(() => parseTemplate('SELECT "open')).toThrow(/unterminated quoted identifier/);
    expect(() => parseTemplate('SELECT /* open')).toThrow(/unterminated comment/);
    expect(() => parseTemplate('SELECT $x$ open')).toThrow(/unterminated dollar-quoted/);
  });

  it('inlines values as escaped literals, quotes and backslashes included', () => {
    const t = parseTemplate('SELECT $1, $2, $3, $4, $5');
    expect(inline(t, ["o'clock", 'back\\slash', null, 42, true])).toBe(
      "SELECT 'o''clock',  E'back\\\\slash', NULL, '42', 'true'",
    );
  });

  it('escapes exactly as node-postgres escapeLiteral does, in linear time', () => {
    const samples = ['', "'", "''", '\\', "\\'", "a'b\\c'd\\\\e", 'plain', 'Jos\u00e9 M\u00fcller \ud83d\ude00', '$1 $$ E\'x\'', '\n\t\r', 'x'.repeat(1000) + "'" + '\\'];
    for (const s of samples) expect(escapeLiteral(s)).toBe(pgEscapeLiteral(s));
    // node-postgres's own one-character-at-a-time loop took over a second for a 3 MB value.
    const big = JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ ref: `customers[3].values[${i}]`, name: `O'Brien \\ ${i}` })));
    expect(escapeLiteral(big)).toBe(pgEscapeLiteral(big));
  });

  it('escapes the 3 MB of report items an import phase stores in well under a second (issue 30)', () => {
    const items = JSON.stringify(Array.from({ length: 30_000 }, (_, i) => ({ kind: 'custom_field_value', ref: `customers[3].customFieldValues[${i}]`, name: `O'Brien ${i}` })));
    expect(items.length).toBeGreaterThan(2_500_000);
    const started = process.hrtime.bigint();
    literal(items);
    // node-postgres's escapeLiteral took 1.4 s here on the 2-core benchmark machine; this one about 40 ms.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(500);
  });

  it('writes arrays, objects, dates and bytes the way node-postgres sends them as parameters', () => {
    expect(literal(['a', 'b"c'])).toBe(` E'{"a","b\\\\"c"}'`);
    expect(literal({ k: "v'" })).toBe(`'{"k":"v''"}'`);
    expect(literal(Buffer.from([0, 255]))).toBe(" E'\\\\x00ff'");
    expect(literal(new Date('2026-01-02T03:04:05.006Z'))).toMatch(/^'2026-01-0[12]T\d\d:04:05\.006[+-]\d\d:\d\d'$/);
    expect(literal(undefined)).toBe('NULL');
  });

  it('gives up on a value with a NUL character, which must travel as a parameter for PostgreSQL to refuse it', () => {
    expect(inline(parseTemplate('SELECT $1'), ['a\u0000b'])).toBeNull();
    expect(inline(parseTemplate('SELECT $1'), [['a', 'b\u0000']])).toBeNull();
  });

  it('refuses a statement given fewer values than its placeholders use', () => {
    expect(() => inline(parseTemplate('SELECT $1, $3'), [1, 2])).toThrow(/uses \$3 but 2 values/);
  });
});
