import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { formatPath, Path, Problem } from './path.util';

/**
 * A small declarative description of JSON values, used both to check input (import documents,
 * policy features) with precise paths and to produce the JSON Schema that documents it, so the
 * two cannot drift apart.
 */
export type Shape = (
  | { type: 'string'; minLength?: number; maxLength?: number; pattern?: RegExp; enum?: readonly string[]; format?: 'email' | 'date' | 'date-time' }
  | { type: 'integer' | 'number'; minimum?: number; maximum?: number }
  | { type: 'boolean' }
  | { type: 'const'; value: string | number }
  | { type: 'array'; items: Shape; minItems?: number; maxItems?: number; uniqueBy?: string }
  | { type: 'object'; properties: Record<string, Shape>; required?: readonly string[]; additionalProperties?: Shape }
  | { type: 'any' }
) & {
  description?: string;
  nullable?: boolean;
  /** Rules relating values to each other, run when the value itself has the right shape. */
  check?: (value: never, path: Path) => Problem[];
};

// Pragmatic (not RFC 5322): one @, no spaces, a dot in the domain, as class-validator's IsEmail accepts in practice.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * The structure (types, required and unknown properties, lengths, ranges, patterns, formats) is
 * checked by ajv against the shape's JSON Schema, so the schema the import format publishes is
 * the one that is enforced. What a JSON Schema cannot say (items unique by a key, `check` rules
 * relating values) runs on each value whose own structure holds, and its problems take their
 * place in document order among ajv's.
 */
const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, unicodeRegExp: false, validateFormats: true });
ajv.addFormat('email', EMAIL);
ajv.addFormat('date', DATE);
ajv.addFormat('date-time', (v: string) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));
const compiled = new WeakMap<Shape, ValidateFunction>();

/** Problems of `value` against `shape`, in document order, at most `limit`. */
export function checkShape(shape: Shape, value: unknown, path: Path = [], limit = 20): Problem[] {
  if (value === undefined) return [[path, missing(shape)]];
  let validate = compiled.get(shape);
  if (!validate) compiled.set(shape, (validate = ajv.compile(validationSchema(shape))));
  const structure = validate(value) ? [] : structureProblems(validate.errors ?? [], value);
  const found: Ordered[] = structure.map(({ problem }) => ({ problem, key: documentOrder(shape, value, problem[0]) }));
  const broken = new Set(structure.flatMap(({ problem: [p] }) => p.map((_, i) => JSON.stringify(p.slice(0, i))).concat(JSON.stringify(p))));
  const stopped = new Set(structure.filter((s) => s.own).map(({ problem: [p] }) => JSON.stringify(p)));
  rules(shape, value, [], { root: shape, value, broken, stopped, out: found });
  found.sort((a, b) => compareOrder(a.key, b.key));
  return found.slice(0, limit).map(({ problem: [p, m] }) => [[...path, ...p], m]);
}

interface Ordered {
  problem: Problem;
  /** Where it comes in the document (documentOrder); rules come after everything inside their value. */
  key: number[];
}

/** No value at all (JSON has none, but code may pass one): what the shape would have wanted. */
function missing(s: Shape): string {
  switch (s.type) {
    case 'any':
      return 'a value is required';
    case 'const':
      return `must be ${JSON.stringify(s.value)}`;
    case 'integer':
      return 'must be a whole number';
    case 'number':
      return 'must be a number';
    case 'boolean':
      return 'must be true or false';
    default:
      return `must be ${s.type === 'string' ? 'a string' : s.type === 'array' ? 'an array' : 'an object'}, not undefined`;
  }
}

/** The schema ajv checks: toJsonSchema's, with null admitted by enum and const of a nullable shape too. */
function validationSchema(s: Shape): Record<string, unknown> {
  const base = toJsonSchema(s);
  delete base.description;
  if (s.nullable && Array.isArray(base.enum)) base.enum = [...base.enum, null];
  if (s.nullable && 'const' in base) {
    base.enum = [base.const, null];
    delete base.const;
  }
  if (s.type === 'array') base.items = validationSchema(s.items);
  if (s.type === 'object') {
    base.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, validationSchema(v)]));
    if (s.additionalProperties) base.additionalProperties = validationSchema(s.additionalProperties);
  }
  return base;
}

/** When a value breaks several of its own constraints, the one named first is reported. */
const PRECEDENCE = ['type', 'const', 'enum', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'minItems', 'maxItems'];

/** ajv's errors as problems: for each value the constraint named first, an array of the wrong length as a whole. */
function structureProblems(errors: readonly ErrorObject[], root: unknown): { problem: Problem; own: boolean }[] {
  const own = new Map<string, { rank: number; problem: Problem }>();
  const children: Problem[] = [];
  for (const e of errors) {
    const at = pathOf(root, e.instancePath);
    if (e.keyword === 'required') children.push([[...at, e.params.missingProperty as string], 'is required']);
    else if (e.keyword === 'additionalProperties') children.push([[...at, e.params.additionalProperty as string], 'is not a known property']);
    else {
      const rank = PRECEDENCE.indexOf(e.keyword);
      const key = JSON.stringify(at);
      if (rank >= 0 && (own.get(key)?.rank ?? Infinity) > rank) own.set(key, { rank, problem: [at, messageOf(e)] });
    }
  }
  const cut = [...own.values()].filter((o) => o.rank >= PRECEDENCE.indexOf('minItems')).map((o) => o.problem[0]);
  const below = (p: Path) => cut.some((c) => c.length < p.length && c.every((seg, i) => p[i] === seg));
  return [...[...own.values()].map((o) => ({ problem: o.problem, own: true })), ...children.map((problem) => ({ problem, own: false }))].filter(({ problem: [p] }) => !below(p));
}

function messageOf(e: ErrorObject): string {
  const s = e.parentSchema as { type?: string | string[]; enum?: unknown[] };
  const type = [s.type ?? []].flat().find((t) => t !== 'null');
  switch (e.keyword) {
    case 'type':
      if (type === 'integer') return 'must be a whole number';
      if (type === 'number') return 'must be a number';
      if (type === 'boolean') return 'must be true or false';
      return `must be ${type === 'string' ? 'a string' : type === 'array' ? 'an array' : 'an object'}, not ${typeName(e.data)}`;
    case 'const':
      return `must be ${JSON.stringify(e.params.allowedValue)}`;
    case 'enum': {
      const allowed = (e.params.allowedValues as unknown[]).filter((v) => v !== null);
      return type === undefined ? `must be ${JSON.stringify(allowed[0])}` : `must be one of: ${allowed.join(', ')}`;
    }
    case 'minLength':
      return `must be at least ${e.params.limit} characters`;
    case 'maxLength':
      return `must be at most ${e.params.limit} characters`;
    case 'pattern':
      return `must match ${e.params.pattern}`;
    case 'format':
      return e.params.format === 'email' ? 'must be an email address' : e.params.format === 'date' ? 'must be a date YYYY-MM-DD' : 'must be an ISO 8601 date-time with a zone';
    case 'minimum':
      return `must be at least ${e.params.limit}`;
    case 'maximum':
      return `must be at most ${e.params.limit}`;
    case 'minItems':
      return `must have at least ${e.params.limit} items`;
    default:
      return `must have at most ${e.params.limit} items`;
  }
}

/** A JSON pointer into `root` as a path, array indexes as numbers. */
function pathOf(root: unknown, pointer: string): Path {
  const out: Path = [];
  let at = root;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const index = Array.isArray(at) ? Number(seg) : NaN;
    out.push(Array.isArray(at) ? index : seg);
    at = (at as Record<string | number, unknown> | undefined)?.[Array.isArray(at) ? index : seg];
  }
  return out;
}

/**
 * Where a path comes in the document as its shape reads it: the shape's properties in their
 * declared order, then unknown properties in the value's order, array items by index.
 */
function documentOrder(shape: Shape | undefined, value: unknown, path: Path): number[] {
  const out: number[] = [];
  let s = shape;
  let v = value;
  for (const seg of path) {
    if (typeof seg === 'number') {
      out.push(seg);
      s = s?.type === 'array' ? s.items : undefined;
    } else {
      const known = s?.type === 'object' ? Object.keys(s.properties) : [];
      const i = known.indexOf(seg);
      const keys = v && typeof v === 'object' ? Object.keys(v) : [];
      out.push(i >= 0 ? i : known.length + Math.max(keys.indexOf(seg), 0));
      s = s?.type === 'object' ? (s.properties[seg] ?? s.additionalProperties) : undefined;
    }
    v = (v as Record<string | number, unknown> | undefined)?.[seg];
  }
  return out;
}

function compareOrder(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

interface RuleRun {
  root: Shape;
  value: unknown;
  /** Paths with a structural problem at or below them. */
  broken: Set<string>;
  /** Paths whose value itself is wrong (type, length…): nothing inside them is looked at. */
  stopped: Set<string>;
  out: Ordered[];
}

/**
 * The rules beyond JSON Schema, as the structure walk always ran them: a `check` on a value with
 * no problem inside it, uniqueness among the items that have none. Returns whether `v` is clean.
 */
function rules(s: Shape, v: unknown, path: Path, run: RuleRun): boolean {
  // A valid document has no broken paths: skip naming this one (JSON of the path at every value
  // was most of the time a 60,000-record import document took to check).
  const here = run.broken.size || run.stopped.size ? JSON.stringify(path) : '';
  if ((v === null && s.nullable) || run.stopped.has(here)) return !run.broken.has(here);
  const before = run.out.length;
  if (s.type === 'array' && Array.isArray(v)) {
    const seen = new Map<unknown, number>();
    for (let i = 0; i < v.length; i++) {
      const itemClean = rules(s.items, v[i], [...path, i], run);
      if (s.uniqueBy && itemClean && v[i] && typeof v[i] === 'object') {
        const key = (v[i] as Record<string, unknown>)[s.uniqueBy];
        if (key !== undefined) {
          if (seen.has(key)) run.out.push({ problem: [[...path, i, s.uniqueBy], `duplicates item ${seen.get(key)}`], key: [...documentOrder(run.root, run.value, [...path, i]), Infinity, Infinity] });
          else seen.set(key, i);
        }
      }
    }
  }
  if (s.type === 'object' && v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    for (const [k, sub] of Object.entries(s.properties)) if (o[k] !== undefined) rules(sub, o[k], [...path, k], run);
    if (s.additionalProperties) for (const k of Object.keys(o)) if (!(k in s.properties) && o[k] !== undefined) rules(s.additionalProperties, o[k], [...path, k], run);
  }
  let clean = !run.broken.has(here) && run.out.length === before;
  if (s.check && clean) {
    const problems = s.check(v as never, path);
    const key = [...documentOrder(run.root, run.value, path), Infinity];
    run.out.push(...problems.map((problem) => ({ problem, key })));
    clean = problems.length === 0;
  }
  return clean;
}

/** JSON Schema (draft 2020-12) of a shape; `check` rules appear in descriptions only. */
export function toJsonSchema(s: Shape): Record<string, unknown> {
  const base: Record<string, unknown> = {};
  switch (s.type) {
    case 'any':
      break;
    case 'const':
      base.const = s.value;
      break;
    case 'string':
      base.type = 'string';
      if (s.enum) base.enum = [...s.enum];
      if (s.minLength !== undefined) base.minLength = s.minLength;
      if (s.maxLength !== undefined) base.maxLength = s.maxLength;
      if (s.pattern) base.pattern = s.pattern.source;
      if (s.format) base.format = s.format;
      break;
    case 'integer':
    case 'number':
      base.type = s.type;
      if (s.minimum !== undefined) base.minimum = s.minimum;
      if (s.maximum !== undefined) base.maximum = s.maximum;
      break;
    case 'boolean':
      base.type = 'boolean';
      break;
    case 'array':
      base.type = 'array';
      base.items = toJsonSchema(s.items);
      if (s.minItems !== undefined) base.minItems = s.minItems;
      if (s.maxItems !== undefined) base.maxItems = s.maxItems;
      break;
    case 'object':
      base.type = 'object';
      base.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toJsonSchema(v)]));
      if (s.required?.length) base.required = [...s.required];
      base.additionalProperties = s.additionalProperties ? toJsonSchema(s.additionalProperties) : false;
      break;
  }
  if (s.nullable && typeof base.type === 'string') base.type = [base.type, 'null'];
  const notes = [s.description, s.type === 'array' && s.uniqueBy ? `Items are unique by ${s.uniqueBy}.` : undefined].filter(Boolean);
  if (notes.length) base.description = notes.join(' ');
  return base;
}

/** Details in the validation error body (docs/api-conventions.md) for a list of problems. */
export function problemDetails(problems: Problem[], style: 'brackets' | 'dots'): { field: string; message: string }[] {
  return problems.map(([path, message]) => ({ field: formatPath(path, style), message }));
}
