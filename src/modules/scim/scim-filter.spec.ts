import fc from 'fast-check';
import { parse, filter as evaluate } from 'scim2-parse-filter';
import { ScimError } from './scim-error';
import { scimFilterToSql } from './scim-filter';
import { USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS } from './scim-resource.util';

const attrs = ['userName', 'externalId', 'displayName', 'emails.value', 'name.formatted'];
const ops = ['eq', 'ne', 'co', 'sw', 'ew'];
const value = fc.string({ maxLength: 20 }).map((s) => s.replace(/[\\"]/g, ''));
const term = fc.tuple(fc.constantFrom(...attrs), fc.constantFrom(...ops), value).map(([a, o, v]) => `${a} ${o} "${v}"`);
const filterText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, term, term, fc.tuple(tie('node'), fc.constantFrom('and', 'or'), tie('node')).map(([l, op, r]) => `(${l} ${op} ${r})`)),
})).node as fc.Arbitrary<string>;

describe('SCIM filter to SQL', () => {
  it('turns every generated filter into SQL whose text holds no input and whose parameters hold every value', () => {
    fc.assert(
      fc.property(filterText, (text) => {
        const { sql, params } = scimFilterToSql(text, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS, 3);
        expect(sql).not.toMatch(/["';]/);
        const placeholders = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
        expect(new Set(placeholders).size).toBe(params.length);
        expect(Math.min(...placeholders)).toBe(3);
        expect(sql.split('(').length).toBe(sql.split(')').length);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with the reference evaluator on which of a set of users a generated filter selects', () => {
    const users = [
      { userName: 'ada@example.com', externalId: 'A1', displayName: 'Ada', emails: [{ value: 'ada@example.com' }], name: { formatted: 'Ada' } },
      { userName: 'bob@example.org', externalId: 'b2', displayName: 'Bob', emails: [{ value: 'bob@example.org' }], name: { formatted: 'Bob' } },
    ];
    // A tiny interpreter of the produced SQL over the same rows: each comparison evaluated as PostgreSQL would.
    const run = (sql: string, params: unknown[], u: (typeof users)[number]): boolean => {
      const col: Record<string, string> = { 'x.email': u.emails[0].value, 'x.user_name': u.userName, 'x.external_id': u.externalId, 'x.name': u.displayName };
      const js = sql
        .replace(/lower\((x\.\w+)\)/g, (_, c) => JSON.stringify(col[c].toLowerCase()))
        .replace(/x\.\w+/g, (c) => JSON.stringify(col[c]))
        .replace(/\$(\d+)/g, (_, n) => JSON.stringify(params[Number(n) - 1]))
        .replace(/ IS DISTINCT FROM /g, ' !== ')
        .replace(/ = /g, ' === ')
        .replace(/("(?:[^"\\]|\\.)*") LIKE ("(?:[^"\\]|\\.)*")/g, (_, a, p) => String(like(JSON.parse(a), JSON.parse(p))))
        .replace(/ AND /g, ' && ')
        .replace(/ OR /g, ' || ');
      return Function(`return (${js});`)() as boolean;
    };
    const like = (s: string, pattern: string): boolean => {
      const re = pattern.replace(/\\([\\%_])|([%_])|([^\\%_])/g, (_, esc, wild, ch) => (esc ? esc.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : wild === '%' ? '[\\s\\S]*' : wild === '_' ? '[\\s\\S]' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      return new RegExp(`^${re}$`).test(s);
    };
    // The reference evaluator compares exactly; RFC 7643 makes userName, emails, displayName and
    // name.formatted caseExact=false (as USER_FILTER_ATTRIBUTES says), so the reference sees those
    // values, on both sides, in lower case. externalId stays exact.
    const caseless = /\b(userName|displayName|emails\.value|name\.formatted) (eq|ne|co|sw|ew) "([^"]*)"/g;
    const referenceText = (text: string) => text.replace(caseless, (_, a: string, o: string, v: string) => `${a} ${o} "${v.toLowerCase()}"`);
    const referenceUser = (u: (typeof users)[number]) => ({
      ...u,
      userName: u.userName.toLowerCase(),
      displayName: u.displayName.toLowerCase(),
      emails: u.emails.map((e) => ({ value: e.value.toLowerCase() })),
      name: { formatted: u.name.formatted.toLowerCase() },
    });
    fc.assert(
      fc.property(filterText, (text) => {
        const { sql, params } = scimFilterToSql(text, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS, 1);
        const reference = evaluate(parse(referenceText(text)));
        for (const u of users) expect(run(sql, params, u)).toBe(reference(referenceUser(u)));
      }),
      { numRuns: 300 },
    );
    // The kind of filter that showed the reference's exact comparison: "ADA" is in "ada@example.com", ignoring case.
    const { sql, params } = scimFilterToSql('userName co "ADA"', USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS, 1);
    expect(users.map((u) => run(sql, params, u))).toEqual([true, false]);
  });

  it('refuses unknown attributes, malformed filters and filters beyond the limits as invalidFilter', () => {
    for (const text of ['password eq "x"', 'userName eq', 'userName zz "x"', `userName eq "${'a'.repeat(1001)}"`, Array.from({ length: 60 }, () => 'userName eq "a"').join(' or ')]) {
      try {
        scimFilterToSql(text, USER_FILTER_ATTRIBUTES, USER_VALUE_PATHS);
        throw new Error(`accepted ${text.slice(0, 40)}`);
      } catch (e) {
        expect(e).toBeInstanceOf(ScimError);
        expect((e as ScimError).scimType).toBe('invalidFilter');
      }
    }
  });
});
