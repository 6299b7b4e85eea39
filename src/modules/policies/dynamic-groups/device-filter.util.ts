import type { Path, Problem } from '../../../common/shape/path.util';
import type { CustomFieldType } from '../../content/custom-fields/custom-field-value.util';

/**
 * The filter language of dynamic device groups:
 *   Filter = { all: Filter[] } | { any: Filter[] } | { not: Filter } | Condition
 *   Condition = { field: 'hostname' | 'osType' | 'siteId' | 'status', op, value? }
 *             | { customField: '<definition id>', op, value? }
 * Text comparisons ignore case. The database compiles the same JSON (dynamic_group_predicate),
 * so this module only decides what is valid.
 */
export const DEVICE_FIELDS = ['hostname', 'osType', 'siteId', 'status'] as const;
export type DeviceField = (typeof DEVICE_FIELDS)[number];
export const FILTER_LIMITS = { depth: 5, conditions: 50, listItems: 100, text: 255 } as const;

const TEXT_OPS = ['eq', 'neq', 'in', 'notIn', 'startsWith', 'endsWith', 'contains', 'exists', 'notExists'];
const OPS_BY_TYPE: Record<CustomFieldType, string[]> = {
  text: TEXT_OPS,
  number: ['eq', 'neq', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'exists', 'notExists'],
  boolean: ['eq', 'neq', 'exists', 'notExists'],
  date: ['eq', 'neq', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'exists', 'notExists'],
  single_select: ['eq', 'neq', 'in', 'notIn', 'exists', 'notExists'],
  multi_select: ['eq', 'neq', 'in', 'notIn', 'contains', 'exists', 'notExists'],
};
const FIELD_OPS: Record<DeviceField, string[]> = {
  hostname: TEXT_OPS,
  osType: TEXT_OPS,
  siteId: ['eq', 'neq', 'in', 'notIn'],
  status: ['eq', 'neq', 'in', 'notIn'],
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export type DeviceFilter = { all: DeviceFilter[] } | { any: DeviceFilter[] } | { not: DeviceFilter } | FilterCondition;
export type FilterCondition =
  | { field: DeviceField; op: string; value?: unknown }
  | { customField: string; op: string; value?: unknown };

export interface FilterDefinition {
  type: CustomFieldType;
  options: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every custom-field reference in a filter (definition ids, or keys in an import document). */
export function filterCustomFields(f: unknown): string[] {
  if (!isObject(f)) return [];
  if (Array.isArray(f.all) || Array.isArray(f.any)) return ((f.all ?? f.any) as unknown[]).flatMap(filterCustomFields);
  if ('not' in f) return filterCustomFields(f.not);
  return typeof f.customField === 'string' ? [f.customField] : [];
}

/** The same filter with every custom-field reference replaced (import keys to definition ids). */
export function mapFilterCustomFields(f: DeviceFilter, map: (ref: string) => string): DeviceFilter {
  if ('all' in f) return { all: f.all.map((c) => mapFilterCustomFields(c, map)) };
  if ('any' in f) return { any: f.any.map((c) => mapFilterCustomFields(c, map)) };
  if ('not' in f) return { not: mapFilterCustomFields(f.not, map) };
  return 'customField' in f ? { ...f, customField: map(f.customField) } : f;
}

/**
 * Problems of a filter. `definitions` resolves a custom-field reference to its definition
 * (undefined: unknown or not applicable to the group's organization).
 */
export function filterProblems(filter: unknown, definitions: (ref: string) => FilterDefinition | undefined, path: Path = []): Problem[] {
  const problems: Problem[] = [];
  let conditions = 0;
  const visit = (f: unknown, at: Path, depth: number): void => {
    if (problems.length >= 20) return;
    if (!isObject(f)) return void problems.push([at, 'a filter is an object']);
    if (depth > FILTER_LIMITS.depth) return void problems.push([at, `filters nest at most ${FILTER_LIMITS.depth} levels`]);
    const keys = Object.keys(f);
    if ('all' in f || 'any' in f || 'not' in f) {
      const key = keys[0];
      if (keys.length !== 1) return void problems.push([at, 'a group has exactly one of all, any or not']);
      if (key === 'not') return visit(f.not, [...at, 'not'], depth + 1);
      const list = f[key];
      if (!Array.isArray(list)) return void problems.push([[...at, key], `${key} is an array of filters`]);
      list.forEach((c, i) => visit(c, [...at, key, i], depth + 1));
      return;
    }
    conditions++;
    if (conditions === FILTER_LIMITS.conditions + 1) problems.push([at, `a filter has at most ${FILTER_LIMITS.conditions} conditions`]);
    const extra = keys.filter((k) => !['field', 'customField', 'op', 'value'].includes(k));
    if (extra.length) return void problems.push([[...at, extra[0]], `${extra[0]} is not a known property`]);
    if (('field' in f) === ('customField' in f)) return void problems.push([at, 'a condition has exactly one of field or customField']);
    const op = f.op;
    if (typeof op !== 'string') return void problems.push([[...at, 'op'], 'op is required']);
    let ops: string[];
    let valueOk: (v: unknown) => boolean;
    let expected: string;
    if ('field' in f) {
      const field = f.field as DeviceField;
      if (!DEVICE_FIELDS.includes(field)) return void problems.push([[...at, 'field'], `field must be one of ${DEVICE_FIELDS.join(', ')}`]);
      ops = FIELD_OPS[field];
      if (field === 'siteId') [valueOk, expected] = [(v) => typeof v === 'string' && UUID.test(v), 'a site id'];
      else if (field === 'status') [valueOk, expected] = [(v) => v === 'active' || v === 'decommissioned', 'active or decommissioned'];
      else [valueOk, expected] = [(v) => typeof v === 'string' && v.length >= 1 && v.length <= FILTER_LIMITS.text, `a string of 1 to ${FILTER_LIMITS.text} characters`];
    } else {
      const def = typeof f.customField === 'string' ? definitions(f.customField) : undefined;
      if (!def) return void problems.push([[...at, 'customField'], 'customField must name a custom field of the group\'s organization']);
      ops = OPS_BY_TYPE[def.type];
      [valueOk, expected] = valueCheck(def);
    }
    if (!ops.includes(op)) return void problems.push([[...at, 'op'], `op must be one of ${ops.join(', ')}`]);
    if (op === 'exists' || op === 'notExists') {
      if ('value' in f) problems.push([[...at, 'value'], `${op} takes no value`]);
      return;
    }
    if (op === 'in' || op === 'notIn') {
      const list = f.value;
      if (!Array.isArray(list) || list.length < 1 || list.length > FILTER_LIMITS.listItems) {
        return void problems.push([[...at, 'value'], `${op} takes an array of 1 to ${FILTER_LIMITS.listItems} values`]);
      }
      const bad = list.findIndex((v) => !valueOk(v));
      if (bad >= 0) problems.push([[...at, 'value', bad], `must be ${expected}`]);
      return;
    }
    if (!valueOk(f.value)) problems.push([[...at, 'value'], `must be ${expected}`]);
  };
  visit(filter, path, 1);
  return problems;
}

function valueCheck(def: FilterDefinition): [(v: unknown) => boolean, string] {
  switch (def.type) {
    case 'number':
      return [(v) => typeof v === 'number' && Number.isFinite(v), 'a number'];
    case 'boolean':
      return [(v) => typeof v === 'boolean', 'true or false'];
    case 'date':
      return [(v) => typeof v === 'string' && DATE.test(v), 'a date YYYY-MM-DD'];
    case 'single_select':
    case 'multi_select':
      return [(v) => typeof v === 'string' && def.options.some((o) => o.toLowerCase() === v.toLowerCase()), `one of: ${def.options.join(', ')}`];
    default:
      return [(v) => typeof v === 'string' && v.length >= 1 && v.length <= FILTER_LIMITS.text, `a string of 1 to ${FILTER_LIMITS.text} characters`];
  }
}
