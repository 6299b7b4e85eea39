export const CUSTOM_FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'single_select', 'multi_select'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

export const CUSTOM_FIELD_KEY = /^[a-z][a-z0-9_]{0,63}$/;
export const CUSTOM_FIELD_LIMITS = { textLength: 10_000, options: 200, optionLength: 255 } as const;

export interface CustomFieldValidation {
  /** text: maximum length (1 to 10,000; 10,000 when absent). */
  maxLength?: number;
  /** number: inclusive bounds and whether only integers are allowed. */
  min?: number;
  max?: number;
  integer?: boolean;
}

export interface CustomFieldShape {
  type: CustomFieldType;
  options: string[];
  validation: CustomFieldValidation;
}

export type CustomFieldValue = string | number | boolean | string[];

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const isSelect = (t: CustomFieldType) => t === 'single_select' || t === 'multi_select';

/**
 * Problems with a definition's options and validation for its type, as [field, message]
 * pairs (field relative to the definition).
 */
export function definitionProblems(d: { type: CustomFieldType; options?: unknown; validation?: unknown }): [string, string][] {
  const problems: [string, string][] = [];
  const options = d.options ?? [];
  if (!Array.isArray(options)) return [['options', 'options must be an array of strings']];
  if (isSelect(d.type)) {
    if (options.length === 0) problems.push(['options', `a ${d.type} field needs at least one option`]);
    if (options.length > CUSTOM_FIELD_LIMITS.options) problems.push(['options', `at most ${CUSTOM_FIELD_LIMITS.options} options`]);
    const seen = new Set<string>();
    options.forEach((o, i) => {
      if (typeof o !== 'string' || o.trim().length < 1 || o.length > CUSTOM_FIELD_LIMITS.optionLength) {
        problems.push([`options[${i}]`, `each option is a string of 1 to ${CUSTOM_FIELD_LIMITS.optionLength} characters`]);
      } else if (seen.has(o.trim().toLowerCase())) {
        problems.push([`options[${i}]`, 'options must be unique (ignoring case)']);
      } else seen.add(o.trim().toLowerCase());
    });
  } else if (options.length > 0) problems.push(['options', `a ${d.type} field has no options`]);

  const v = d.validation ?? {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [...problems, ['validation', 'validation must be an object']];
  const allowed: Record<CustomFieldType, string[]> = {
    text: ['maxLength'],
    number: ['min', 'max', 'integer'],
    boolean: [],
    date: [],
    single_select: [],
    multi_select: [],
  };
  const rules = v as Record<string, unknown>;
  for (const k of Object.keys(rules)) {
    if (!allowed[d.type].includes(k)) problems.push([`validation.${k}`, `${k} does not apply to a ${d.type} field`]);
  }
  if ('maxLength' in rules && !(Number.isInteger(rules.maxLength) && (rules.maxLength as number) >= 1 && (rules.maxLength as number) <= CUSTOM_FIELD_LIMITS.textLength)) {
    problems.push(['validation.maxLength', `maxLength is an integer from 1 to ${CUSTOM_FIELD_LIMITS.textLength}`]);
  }
  for (const k of ['min', 'max']) {
    if (k in rules && !(typeof rules[k] === 'number' && Number.isFinite(rules[k]))) problems.push([`validation.${k}`, `${k} must be a finite number`]);
  }
  if (typeof rules.min === 'number' && typeof rules.max === 'number' && rules.min > rules.max) problems.push(['validation.min', 'min must not exceed max']);
  if ('integer' in rules && typeof rules.integer !== 'boolean') problems.push(['validation.integer', 'integer must be a boolean']);
  return problems;
}

/** Options trimmed, in their given order. */
export function canonicalOptions(options: readonly string[] | undefined): string[] {
  return (options ?? []).map((o) => o.trim());
}

function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** A typed value checked against its definition, in canonical form (select options as defined). */
export function checkValue(def: CustomFieldShape, raw: unknown): Checked<CustomFieldValue> {
  const fail = (message: string): Checked<CustomFieldValue> => ({ ok: false, message });
  const option = (s: unknown): string | undefined => (typeof s === 'string' ? def.options.find((o) => o.toLowerCase() === s.trim().toLowerCase()) : undefined);
  switch (def.type) {
    case 'text': {
      const max = def.validation.maxLength ?? CUSTOM_FIELD_LIMITS.textLength;
      if (typeof raw !== 'string' || raw.length < 1) return fail('value must be a non-empty string');
      if (raw.length > max) return fail(`value must be at most ${max} characters`);
      return { ok: true, value: raw };
    }
    case 'number': {
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return fail('value must be a finite number');
      if (def.validation.integer && !Number.isInteger(raw)) return fail('value must be an integer');
      if (def.validation.min !== undefined && raw < def.validation.min) return fail(`value must be at least ${def.validation.min}`);
      if (def.validation.max !== undefined && raw > def.validation.max) return fail(`value must be at most ${def.validation.max}`);
      return { ok: true, value: raw };
    }
    case 'boolean':
      return typeof raw === 'boolean' ? { ok: true, value: raw } : fail('value must be true or false');
    case 'date':
      return typeof raw === 'string' && isCalendarDate(raw) ? { ok: true, value: raw } : fail('value must be a calendar date YYYY-MM-DD');
    case 'single_select': {
      const o = option(raw);
      return o === undefined ? fail(`value must be one of: ${def.options.join(', ')}`) : { ok: true, value: o };
    }
    case 'multi_select': {
      if (!Array.isArray(raw) || raw.length === 0) return fail('value must be a non-empty array of options');
      const picked = raw.map(option);
      const bad = raw.find((_, i) => picked[i] === undefined);
      if (bad !== undefined) return fail(`${JSON.stringify(bad)} is not one of: ${def.options.join(', ')}`);
      // Stored in the definition's order, each option once, so equal selections compare equal.
      return { ok: true, value: def.options.filter((o) => picked.includes(o)) };
    }
  }
}

/** A value written as text (CSV): parsed for the definition's type, then checked. Multi-select options are separated by ";". */
export function parseTextValue(def: CustomFieldShape, text: string): Checked<CustomFieldValue> {
  const t = text.trim();
  switch (def.type) {
    case 'number':
      return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) ? checkValue(def, Number(t)) : { ok: false, message: 'value must be a number' };
    case 'boolean': {
      const b = { true: true, yes: true, '1': true, false: false, no: false, '0': false }[t.toLowerCase()];
      return b === undefined ? { ok: false, message: 'value must be true, false, yes, no, 1 or 0' } : checkValue(def, b);
    }
    case 'multi_select':
      return checkValue(
        def,
        t.split(';').map((s) => s.trim()).filter(Boolean),
      );
    case 'text':
      return checkValue(def, text);
    default:
      return checkValue(def, t);
  }
}
