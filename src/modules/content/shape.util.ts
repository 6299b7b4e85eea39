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

/** Problems of `value` against `shape`, in document order, at most `limit`. */
export function checkShape(shape: Shape, value: unknown, path: Path = [], limit = 20): Problem[] {
  const out: Problem[] = [];
  visit(shape, value, path, out, limit);
  return out.slice(0, limit);
}

function visit(s: Shape, v: unknown, path: Path, out: Problem[], limit: number): void {
  if (out.length >= limit) return;
  const start = out.length;
  const add = (p: Path, m: string): void => {
    out.push([p, m]);
  };
  if (v === null && s.nullable) return;
  switch (s.type) {
    case 'any':
      if (v === undefined) add(path, 'a value is required');
      break;
    case 'const':
      if (v !== s.value) add(path, `must be ${JSON.stringify(s.value)}`);
      return;
    case 'string': {
      if (typeof v !== 'string') return add(path, `must be a string, not ${typeName(v)}`);
      if (s.enum && !s.enum.includes(v)) return add(path, `must be one of: ${s.enum.join(', ')}`);
      if (s.minLength !== undefined && v.length < s.minLength) return add(path, `must be at least ${s.minLength} characters`);
      if (s.maxLength !== undefined && v.length > s.maxLength) return add(path, `must be at most ${s.maxLength} characters`);
      if (s.pattern && !s.pattern.test(v)) return add(path, `must match ${s.pattern.source}`);
      if (s.format === 'email' && !EMAIL.test(v)) return add(path, 'must be an email address');
      if (s.format === 'date' && !DATE.test(v)) return add(path, 'must be a date YYYY-MM-DD');
      if (s.format === 'date-time' && !(DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)))) return add(path, 'must be an ISO 8601 date-time with a zone');
      break;
    }
    case 'integer':
    case 'number': {
      if (typeof v !== 'number' || !Number.isFinite(v)) return add(path, `must be a ${s.type === 'integer' ? 'whole number' : 'number'}`);
      if (s.type === 'integer' && !Number.isInteger(v)) return add(path, 'must be a whole number');
      if (s.minimum !== undefined && v < s.minimum) return add(path, `must be at least ${s.minimum}`);
      if (s.maximum !== undefined && v > s.maximum) return add(path, `must be at most ${s.maximum}`);
      break;
    }
    case 'boolean':
      if (typeof v !== 'boolean') return add(path, 'must be true or false');
      break;
    case 'array': {
      if (!Array.isArray(v)) return add(path, `must be an array, not ${typeName(v)}`);
      if (s.minItems !== undefined && v.length < s.minItems) return add(path, `must have at least ${s.minItems} items`);
      if (s.maxItems !== undefined && v.length > s.maxItems) return add(path, `must have at most ${s.maxItems} items`);
      const seen = new Map<unknown, number>();
      for (let i = 0; i < v.length && out.length < limit; i++) {
        const before = out.length;
        visit(s.items, v[i], [...path, i], out, limit);
        if (s.uniqueBy && out.length === before && v[i] && typeof v[i] === 'object') {
          const key = (v[i] as Record<string, unknown>)[s.uniqueBy];
          if (key !== undefined) {
            if (seen.has(key)) add([...path, i, s.uniqueBy], `duplicates item ${seen.get(key)}`);
            else seen.set(key, i);
          }
        }
      }
      break;
    }
    case 'object': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return add(path, `must be an object, not ${typeName(v)}`);
      const o = v as Record<string, unknown>;
      for (const [k, sub] of Object.entries(s.properties)) {
        if (o[k] === undefined) {
          if (s.required?.includes(k)) add([...path, k], 'is required');
        } else visit(sub, o[k], [...path, k], out, limit);
        if (out.length >= limit) return;
      }
      for (const k of Object.keys(o)) {
        if (k in s.properties || o[k] === undefined) continue;
        if (s.additionalProperties) visit(s.additionalProperties, o[k], [...path, k], out, limit);
        else add([...path, k], 'is not a known property');
        if (out.length >= limit) return;
      }
      break;
    }
  }
  if (s.check && out.length === start) out.push(...s.check(v as never, path));
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
