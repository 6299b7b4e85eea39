/**
 * The bad-input campaign's generators: from the served OpenAPI document, a plausible body per
 * operation (the baseline), and for every documented field, path parameter and query parameter
 * the values an attacker or a broken client sends. Nothing here knows a route: a route is
 * covered the day it is documented.
 */

export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface Operation {
  operationId?: string;
  parameters?: { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: Record<string, string[]>[];
}

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}

/** JSON text spliced in verbatim: keys JSON.stringify cannot write (`__proto__`), duplicates, deep nesting. */
export class Raw {
  constructor(readonly text: string) {}
}

export type Value = unknown;

/** Serialises like JSON.stringify, except that Raw values are written as they are. */
export function serialise(v: Value): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(serialise).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${serialise(x)}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export function resolve(doc: OpenApiDoc, s: Schema | undefined, seen = 0): Schema {
  if (!s || seen > 10) return {};
  if (s.$ref) return resolve(doc, doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')], seen + 1);
  if (s.allOf?.length) {
    const parts = s.allOf.map((p) => resolve(doc, p, seen + 1));
    return {
      ...Object.assign({}, ...parts),
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
      required: parts.flatMap((p) => p.required ?? []),
    };
  }
  if (s.oneOf?.length) return resolve(doc, s.oneOf[0], seen + 1);
  if (s.anyOf?.length) return resolve(doc, s.anyOf[0], seen + 1);
  return s;
}

const PATTERN_CANDIDATES = ['0'.repeat(64), '09:00', '#aabbcc', '123456', 'campaign', 'a', ''];

/** Real ids of the seeded world, by the field or parameter names that carry them. */
export type Ids = Record<string, string>;

/** A value the schema accepts, as far as the document says; names that carry ids get real ones. */
export function sample(doc: OpenApiDoc, schema: Schema | undefined, name: string, ids: Ids, depth = 0): Value {
  const s = resolve(doc, schema);
  if (s.enum?.length) return s.enum[0];
  const id = ids[name];
  if (id && (s.type === 'string' || s.format === 'uuid')) return id;
  if (s.type === 'array') {
    const item = sample(doc, s.items, name.replace(/s$/, ''), ids, depth + 1);
    return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => item);
  }
  if (s.type === 'object' || s.properties) {
    if (!s.properties || depth > 5) return {};
    return Object.fromEntries((s.required ?? []).filter((k) => s.properties![k]).map((k) => [k, sample(doc, s.properties![k], k, ids, depth + 1)]));
  }
  if (s.type === 'number' || s.type === 'integer') return Math.min(Math.max(s.minimum ?? 1, 1), s.maximum ?? Number.MAX_SAFE_INTEGER);
  if (s.type === 'boolean') return true;
  if (s.format === 'uuid') return '3f1c8a52-52b5-4c1d-9d0e-6f1b2c3d4e5f';
  if (s.format === 'email') return 'campaign@campaign.example';
  if (s.format === 'date-time' || /At$/.test(name)) return new Date(Date.now() + 86_400_000).toISOString();
  if (s.pattern) {
    const re = new RegExp(s.pattern);
    return PATTERN_CANDIDATES.find((c) => re.test(c)) ?? 'a';
  }
  if (/password/i.test(name)) return 'campaign-password-0123';
  if (/timezone/i.test(name)) return 'UTC';
  const text = 'campaign';
  return s.minLength && s.minLength > text.length ? text.padEnd(s.minLength, 'x') : text;
}

/** Nested arrays or objects `levels` deep, as JSON text. */
export const deepArrays = (levels: number) => new Raw('['.repeat(levels) + ']'.repeat(levels));
export const deepObjects = (levels: number) => new Raw('{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1));

const POLLUTION = new Raw('{"__proto__":{"isAdmin":true,"permissions":["*"]},"constructor":{"prototype":{"isAdmin":true}}}');

/** Values every field gets, whatever its type (nesting past the bound is sent once per operation, in wholeBodies). */
const ANY_FIELD: [string, Value][] = [
  ['null', null],
  ['true', true],
  ['empty string', ''],
  ['empty array', []],
  ['array of null', [null]],
  ['prototype keys', POLLUTION],
  ['nested 31 deep', deepArrays(31)],
];

function stringValues(s: Schema, name: string): [string, Value][] {
  const out: [string, Value][] = [
    ['number for a string', 12345],
    ['NUL', 'a\u0000b'],
    ['control characters', '\u0007\u001b[31m\u0085\u2028'],
    ['right-to-left override', '\u202eexe.txt'],
    ['unpaired surrogate', new Raw('"a\\ud800@b.example"')],
    ['SQL wildcards', '%_\\%'],
    ['pattern characters', '**/?[a-z]{1000000}(a+)+$'],
  ];
  if (s.maxLength !== undefined) {
    out.push(['at maxLength', 'a'.repeat(s.maxLength)], ['one over maxLength', 'a'.repeat(s.maxLength + 1)], ['astral characters over maxLength', '😀'.repeat(s.maxLength)]);
  } else {
    out.push(['64 KB string', 'a'.repeat(64 * 1024)]);
  }
  if (s.minLength) out.push(['one under minLength', 'a'.repeat(s.minLength - 1)]);
  if (s.format === 'uuid') out.push(['nil uuid', '00000000-0000-0000-0000-000000000000'], ['upper-case uuid', '3F1C8A52-52B5-4C1D-9D0E-6F1B2C3D4E5F'], ['uuid with NUL', '3f1c8a52-52b5-4c1d-9d0e-6f1b2c3d4e5f\u0000']);
  if (s.format === 'email') out.push(['email without domain', 'a@'], ['long email', `${'a'.repeat(300)}@b.example`]);
  if (s.format === 'date-time' || /At$|^(from|to)$/.test(name)) out.push(['impossible date', '2024-13-45T99:99:99Z'], ['year 275760', '+275760-09-13T00:00:00.001Z'], ['year 0', '0000-01-01T00:00:00Z']);
  return out;
}

function numberValues(s: Schema): [string, Value][] {
  const out: [string, Value][] = [
    ['string for a number', '12'],
    ['fraction', 1.5],
    ['huge', 1e308],
    ['-1e308', -1e308],
    ['2^63', new Raw('9223372036854775808')],
    ['beyond a double', new Raw('1e400')],
    ['MAX_SAFE_INTEGER + 2', new Raw('9007199254740993')],
    ['minus zero', new Raw('-0')],
  ];
  if (s.minimum !== undefined) out.push(['one under minimum', s.minimum - 1]);
  if (s.maximum !== undefined) out.push(['at maximum', s.maximum], ['one over maximum', s.maximum + 1]);
  return out;
}

function arrayValues(doc: OpenApiDoc, s: Schema, name: string, ids: Ids): [string, Value][] {
  const item = sample(doc, s.items, name.replace(/s$/, ''), ids);
  const out: [string, Value][] = [['items of every type', [1, 'a', null, {}, [], true]], ['duplicate items', [item, item]], ['1,000 items', Array.from({ length: 1000 }, () => item)], ['string for an array', 'a,b']];
  if (s.maxItems !== undefined) out.push(['one over maxItems', Array.from({ length: s.maxItems + 1 }, () => item)]);
  return out;
}

/** The bad values of one documented field, by its declared type. */
export function fieldValues(doc: OpenApiDoc, schema: Schema | undefined, name: string, ids: Ids): [string, Value][] {
  const s = resolve(doc, schema);
  const typed =
    s.type === 'string' ? stringValues(s, name)
    : s.type === 'number' || s.type === 'integer' ? numberValues(s)
    : s.type === 'array' ? arrayValues(doc, s, name, ids)
    : s.type === 'boolean' ? [['string for a boolean', 'true'], ['one for a boolean', 1]] as [string, Value][]
    : [['string for an object', 'campaign'], ['array for an object', [{}]], ['empty object', {}], ['deep object', deepObjects(31)]] as [string, Value][];
  return [...ANY_FIELD, ...typed];
}

/** Values of a path parameter that are not ids. */
export const PATH_VALUES: [string, string][] = [
  ['word', 'abc'],
  ['zero', '0'],
  ['negative', '-1'],
  ['huge', '99999999999999999999999'],
  ['null', 'null'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['encoded NUL', '%00'],
  ['broken percent-encoding', '%E0%A4%A'],
  ['lone percent', '%'],
  ['encoded traversal', '%2e%2e%2f%2e%2e%2fetc'],
  ['2,000 characters', 'a'.repeat(2000)],
  ['nil uuid', '00000000-0000-0000-0000-000000000000'],
  ['uuid with encoded NUL', '3f1c8a52-52b5-4c1d-9d0e-6f1b2c3d4e5f%00'],
  ['upper-case uuid', '3F1C8A52-52B5-4C1D-9D0E-6F1B2C3D4E5F'],
  ['quote', "%27%20or%20%271%27%3D%271"],
  ['right-to-left override', encodeURIComponent('\u202e')],
];

/** Values of a query parameter, already encoded (one entry may repeat the parameter). */
export function queryValues(name: string): [string, string][] {
  const q = encodeURIComponent(name);
  return [
    ['empty', `${q}=`],
    ['word', `${q}=abc`],
    ['negative', `${q}=-1`],
    ['zero', `${q}=0`],
    ['huge', `${q}=99999999999999999999999`],
    ['1e308', `${q}=1e308`],
    ['fraction', `${q}=1.5`],
    ['NUL', `${q}=a%00b`],
    ['control characters', `${q}=%07%1B%C2%85`],
    ['invalid UTF-8', `${q}=%FF%FE`],
    ['broken percent-encoding', `${q}=%E0%A4%A`],
    ['5,000 characters', `${q}=${'a'.repeat(5000)}`],
    ['repeated', `${q}=1&${q}=2`],
    ['bracketed', `${q}[a]=1`],
    ['impossible date', `${q}=2024-13-45T99:99:99Z`],
    ['pattern characters', `${q}=${encodeURIComponent('%_*?[')}`],
  ];
}

/** Bodies that replace the whole body: prototype keys, empty and duplicate keys, nesting, non-objects. */
export function wholeBodies(baseline: Record<string, Value>): [string, string | Buffer][] {
  const inner = serialise(baseline).slice(1, -1);
  const withFields = (extra: string) => `{${extra}${inner ? `,${inner}` : ''}}`;
  const firstKey = Object.keys(baseline)[0];
  const firstString = Object.entries(baseline).find(([, v]) => typeof v === 'string')?.[0];
  const out: [string, string | Buffer][] = [
    ['__proto__ key', withFields('"__proto__":{"isAdmin":true,"orgIds":["*"]}')],
    ['constructor.prototype key', withFields('"constructor":{"prototype":{"isAdmin":true}}')],
    ['empty key', withFields('"":"empty"')],
    ['unknown field', withFields('"campaignUnknownField":1')],
    ['arrays nested 1,300 deep', '['.repeat(1300) + ']'.repeat(1300)],
    ['33 deep in a field', withFields(`"campaignDeep":${deepArrays(32).text}`)],
    ['objects nested 2,400 deep', deepObjects(2400).text],
    ['array at the top', '[]'],
    ['null at the top', 'null'],
    ['string at the top', '"campaign"'],
    ['number at the top', '1'],
    ['truncated JSON', '{"a":'],
    ['single quotes', "{'a':1}"],
    ['trailing comma', withFields('"z":1').replace(/}$/, ',}')],
    ['byte order mark', `\uFEFF${serialise(baseline)}`],
    ['10,001 members', `{"a":[${Array.from({ length: 10_001 }, () => '0').join(',')}]}`],
    ['empty body', ''],
  ];
  if (firstKey) out.push(['duplicate key', `{${inner},${JSON.stringify(firstKey)}:{"a":[1,{"b":null}]}}`]);
  if (firstString) {
    const text = serialise({ ...baseline, [firstString]: new Raw('"@@"') });
    const [head, tail] = text.split('@@');
    out.push(['invalid UTF-8 in a string', Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(tail)])]);
  }
  return out;
}

/** Text bodies for the other media types an operation documents (CSV and the like). */
export const OTHER_BODIES: [string, string | Buffer][] = [
  ['CSV with NUL and control characters', 'name,email\r\na\u0000b,\u0007@x.example\r\n'],
  ['CSV with invalid UTF-8', Buffer.concat([Buffer.from('name,email\r\n'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(',a@b.example\r\n')])],
  ['CSV with an unterminated quote', 'name,email\r\n"abc,def\r\n'],
  ['CSV with 10,000 columns', `${Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(',')}\r\n`],
  ['CSV with a formula', 'name,email\r\n=HYPERLINK("http://x"),a@b.example\r\n'],
  ['objects nested 100,000 deep', deepObjects(100_000).text],
  ['a policy nested 5,000 deep', `{"format":"rmm-interchange","version":1,"account":{"externalId":"a","name":"A"},"customers":[],"policies":[{"externalId":"p","name":"P","type":"patch","features":${deepObjects(5000).text}}]}`],
];

/** Content types and encodings the JSON routes must refuse with a 4xx. */
export const WRONG_TYPES: [string, Record<string, string>, string][] = [
  ['text/plain', { 'content-type': 'text/plain' }, '{"a":1}'],
  ['XML', { 'content-type': 'application/xml' }, '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>'],
  ['form', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&__proto__[isAdmin]=true'],
  ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'],
  ['no content type', {}, '{"a":1}'],
  ['latin-1 charset', { 'content-type': 'application/json; charset=latin1' }, '{"a":1}'],
  ['gzip that is not gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, '{"a":1}'],
  ['unknown encoding', { 'content-type': 'application/json', 'content-encoding': 'x-campaign' }, '{"a":1}'],
];

/**
 * Text that must never reach a caller: PostgreSQL and driver messages, SQL, stack frames, library
 * names and parser messages.
 */
export const LEAK =
  /QueryFailedError|duplicate key value|violates [a-z ]*constraint|syntax error at|invalid input syntax|current transaction is aborted|invalid byte sequence|relation "|column "|\bSELECT\b[\s\S]{0,200}\bFROM\b|INSERT INTO|UPDATE \w+ SET|node_modules|\bat [\w.<>]+ \(|TypeError|RangeError|ReferenceError|Maximum call stack|class-transformer|typeorm|Unexpected token|in JSON at position|is not valid JSON|ECONNREFUSED|pg_catalog|stack depth/i;
