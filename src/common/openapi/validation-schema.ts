import { getMetadataStorage } from 'class-validator';
import { PERMISSION_ACTIONS, PERMISSION_RESOURCES } from '../permission-set.util';

/** The schema keywords a property's validators imply (OpenAPI 3.0 schema object, loosely typed). */
export type SchemaPart = Record<string, unknown> & { items?: SchemaPart };

/** Every permission string the API accepts: `*`, or `resource:action`. */
const PERMISSIONS = ['*', ...PERMISSION_RESOURCES.flatMap((r) => PERMISSION_ACTIONS.map((a) => `${r}:${a}`))];

interface Rule {
  name: string;
  constraints?: unknown[];
}

/**
 * What each class-validator constraint says about the value, in schema keywords. A constraint
 * with `each: true` says it about every item of an array. Names not listed here say nothing the
 * schema can state (a conditional, a nested object, a check only the code can make: a time zone, a
 * headline's code points, no NUL characters); the list of those is in UNSTATED, so a new
 * validator is a decision (test/e2e/openapi/document.e2e.test.ts fails on a name in neither).
 */
const RULES: Record<string, (r: Rule) => SchemaPart | null> = {
  isIn: (r) => ({ enum: [...(r.constraints?.[0] as unknown[])] }),
  isEnum: (r) => ({ enum: Object.values(r.constraints?.[0] as object) }),
  isUuid: () => ({ type: 'string', format: 'uuid' }),
  isEmail: () => ({ type: 'string', format: 'email' }),
  isIso8601: () => ({ type: 'string', format: 'date-time' }),
  isDateString: () => ({ type: 'string', format: 'date-time' }),
  isUrl: () => ({ type: 'string', format: 'uri' }),
  isHttpUrl: () => ({ type: 'string', format: 'uri' }),
  isLogoUrl: () => ({ type: 'string', format: 'uri' }),
  isPermission: () => ({ type: 'string', enum: PERMISSIONS }),
  isInt: () => ({ type: 'integer' }),
  isNumber: () => ({ type: 'number' }),
  isString: () => ({ type: 'string' }),
  isBoolean: () => ({ type: 'boolean' }),
  min: (r) => ({ minimum: r.constraints?.[0] }),
  max: (r) => ({ maximum: r.constraints?.[0] }),
  isLength: (r) => ({ minLength: r.constraints?.[0], ...(r.constraints?.[1] === undefined ? {} : { maxLength: r.constraints[1] }) }),
  minLength: (r) => ({ minLength: r.constraints?.[0] }),
  maxLength: (r) => ({ maxLength: r.constraints?.[0] }),
  matches: (r) => {
    const [pattern, modifiers] = r.constraints ?? [];
    const re = pattern instanceof RegExp ? pattern : new RegExp(String(pattern), typeof modifiers === 'string' ? modifiers : undefined);
    // JSON Schema patterns have no flags: a case-insensitive pattern is stated by hand (@ApiProperty({ pattern })).
    return re.flags.replace(/[gu]/g, '') === '' ? { pattern: re.source } : null;
  },
};

/** Rules that apply to the array itself even when declared on an array property. */
const ARRAY_RULES: Record<string, (r: Rule) => SchemaPart> = {
  arrayMinSize: (r) => ({ minItems: r.constraints?.[0] }),
  arrayMaxSize: (r) => ({ maxItems: r.constraints?.[0] }),
  arrayUnique: () => ({ uniqueItems: true }),
  arrayNotEmpty: () => ({ minItems: 1 }),
  isArray: () => ({ type: 'array' }),
};

/** Validators that state nothing a schema can carry (see RULES). */
export const UNSTATED = new Set([
  'conditionalValidation',
  'nestedValidation',
  'isDefined',
  'isObject',
  'notContains',
  'isIanaTimeZone',
  'isRuleTimeZone',
  'isHeadline',
  'whitelistValidation',
  'isNotEmpty',
  'isOptional',
]);

/** Whether a validator name is known to this file (stated as schema or deliberately not). */
export const isKnownValidator = (name: string): boolean => name in RULES || name in ARRAY_RULES || UNSTATED.has(name);

/**
 * The schema keywords the class-validator decorators of a DTO class imply, per property: what the
 * server really checks, so the document cannot drift from it. Inherited and mapped-type (PartialType,
 * OmitType…) validators are included, as class-validator applies them.
 */
export function validationSchemas(target: Function): Record<string, SchemaPart> {
  // Decorators never change after the class is defined: one reading per class and process.
  const known = computed.get(target);
  if (known) return structuredClone(known);
  const out = readValidationSchemas(target);
  computed.set(target, out);
  return structuredClone(out);
}

const computed = new WeakMap<Function, Record<string, SchemaPart>>();

function readValidationSchemas(target: Function): Record<string, SchemaPart> {
  const out: Record<string, SchemaPart> = {};
  const metadata = getMetadataStorage().getTargetValidationMetadatas(target, '', true, false);
  for (const m of metadata) {
    const name = m.name ?? m.type;
    const part = out[m.propertyName] ?? (out[m.propertyName] = {});
    if (name in ARRAY_RULES) {
      Object.assign(part, ARRAY_RULES[name]({ name, constraints: m.constraints }));
      continue;
    }
    const rule = RULES[name];
    const stated = rule ? rule({ name, constraints: m.constraints }) : null;
    if (!stated) continue;
    if (m.each) {
      part.type = 'array';
      part.items = { ...part.items, ...stated };
    } else {
      Object.assign(part, stated);
    }
  }
  for (const [key, part] of Object.entries(out)) {
    if (Object.keys(part).length === 0) delete out[key];
    // Every enumerated value is a string: say so, so a client types it as a string union.
    for (const s of [part, part.items]) if (s?.enum && !s.type && (s.enum as unknown[]).every((v) => typeof v === 'string')) s.type = 'string';
  }
  return out;
}

/** Every validator name used by the classes `which` selects (for the test that each one is a decision). */
export function validatorNames(which: (target: Function) => boolean): Set<string> {
  const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Function, { name?: string; type: string }[]> };
  const names = new Set<string>();
  for (const [target, list] of storage.validationMetadatas) if (which(target)) for (const m of list) names.add(m.name ?? m.type);
  return names;
}
