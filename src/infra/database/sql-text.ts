
/** node-postgres's conversion of a value to the text it sends as a parameter (not in its type declarations). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/**
 * A statement's constant text cut at its placeholders ($1, $2, …), found once when the statement
 * is declared. Placeholders inside string literals, quoted identifiers, comments and
 * dollar-quoted bodies are text, not placeholders.
 *
 * Why: a transaction's opening (BEGIN and the row-level-security settings) travels in the same
 * message as its first statement (docs/architecture.md, "one round trip to open"). PostgreSQL's
 * simple-query message carries several statements but no parameters, so a hot statement sent that
 * way carries its values as literals, each escaped as node-postgres's own escapeLiteral does (escapeLiteral below) after
 * node-postgres's own value conversion (prepareValue): the same text the extended protocol would
 * have sent as a parameter, and like an untyped parameter, a quoted literal takes its type from
 * its context.
 */
export interface SqlTemplate {
  /** The text between placeholders: parts.length === slots.length + 1. */
  readonly parts: readonly string[];
  /** The 0-based parameter index of each placeholder, in order of appearance. */
  readonly slots: readonly number[];
}

const IDENT = /[A-Za-z0-9_$]/;

export function parseTemplate(text: string): SqlTemplate {
  const parts: string[] = [];
  const slots: number[] = [];
  let start = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === "'") {
      // E'…' strings honour backslash escapes; standard strings only double the quote.
      const escapes = i > 0 && (text[i - 1] === 'E' || text[i - 1] === 'e') && (i < 2 || !IDENT.test(text[i - 2]));
      i++;
      while (i < n) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === "'" && text[i + 1] === "'") i += 2;
        else if (text[i] === "'") break;
        else i++;
      }
      if (i >= n) throw new Error('unterminated string literal in SQL text');
      i++;
    } else if (c === '"') {
      i = text.indexOf('"', i + 1);
      while (i !== -1 && text[i + 1] === '"') i = text.indexOf('"', i + 2);
      if (i === -1) throw new Error('unterminated quoted identifier in SQL text');
      i++;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
    } else if (c === '/' && text[i + 1] === '*') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === '/' && text[i + 1] === '*') (depth++, (i += 2));
        else if (text[i] === '*' && text[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
      if (depth > 0) throw new Error('unterminated comment in SQL text');
    } else if (c === '$' && (i === 0 || !IDENT.test(text[i - 1]))) {
      const placeholder = /^\$(\d+)(?![A-Za-z0-9_$])/.exec(text.slice(i, i + 12));
      if (placeholder) {
        parts.push(text.slice(start, i));
        slots.push(Number(placeholder[1]) - 1);
        i += placeholder[0].length;
        start = i;
        continue;
      }
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 64));
      if (!tag) {
        i++;
        continue;
      }
      const end = text.indexOf(tag[0], i + tag[0].length);
      if (end === -1) throw new Error('unterminated dollar-quoted text in SQL text');
      i = end + tag[0].length;
    } else {
      i++;
    }
  }
  parts.push(text.slice(start));
  if (slots.some((s) => s < 0)) throw new Error('placeholder $0 in SQL text');
  return Object.freeze({ parts: Object.freeze(parts), slots: Object.freeze(slots) });
}

/**
 * node-postgres's escapeLiteral, to the byte: quotes doubled, and when the text has a backslash,
 * backslashes doubled and the literal written E'…'. In linear time: node-postgres builds the
 * literal one character at a time, which took 1.4 s (and a storm of garbage collection) for the
 * 3 MB of report items an import phase stores (issue 30).
 */
export function escapeLiteral(text: string): string {
  const quoted = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

/** One value as an SQL literal: node-postgres's text form of it, quoted as node-postgres quotes it. */
export function literal(value: unknown): string {
  const text = prepareValue(value) as string | Buffer | null;
  if (text === null || text === undefined) return 'NULL';
  if (Buffer.isBuffer(text)) return escapeLiteral(`\\x${text.toString('hex')}`);
  return escapeLiteral(String(text));
}

/**
 * The statement with every placeholder replaced by its value's literal, or null when a value
 * cannot travel as a literal: a NUL character ends a simple-query message's text, so such a value
 * goes as a parameter and PostgreSQL refuses it with its own error (22021), as it always has.
 */
export function inline(template: SqlTemplate, params: readonly unknown[]): string | null {
  const { parts, slots } = template;
  let out = parts[0];
  for (let k = 0; k < slots.length; k++) {
    const slot = slots[k];
    if (slot >= params.length) throw new Error(`SQL text uses $${slot + 1} but ${params.length} values were given`);
    const value = literal(params[slot]);
    if (value.includes('\0')) return null;
    out += value + parts[k + 1];
  }
  return out;
}

/**
 * A timestamptz column as the API writes timestamps (what Date.toISOString writes of the value pg
 * parses: UTC, milliseconds truncated from microseconds), formatted by PostgreSQL: parsing each
 * timestamp into a Date and formatting it back costs the service about 0.8 µs a value.
 */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
