import type { AttributeTable, ValuePathTable } from './scim-filter';
import { ScimError } from './scim-error';
import type { Candidates } from './scim-user.repository';

// What the Users and Groups endpoints share: the schemas they answer with, the list query and how its parts are read.

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const MAX_PAGE = 100;

/** What a Users filter may name, each mapped to a fixed column of the Users query. */
export const USER_FILTER_ATTRIBUTES: AttributeTable = {
  id: { sql: 'x.id::text', kind: 'string', caseExact: true },
  username: { sql: 'x.user_name', kind: 'string', caseExact: false },
  externalid: { sql: 'x.external_id', kind: 'string', caseExact: true },
  'emails.value': { sql: 'x.email', kind: 'string', caseExact: false },
  emails: { sql: 'x.email', kind: 'string', caseExact: false },
  displayname: { sql: 'x.name', kind: 'string', caseExact: false },
  'name.formatted': { sql: 'x.name', kind: 'string', caseExact: false },
  'name.givenname': { sql: 'x.given_name', kind: 'string', caseExact: false },
  'name.familyname': { sql: 'x.family_name', kind: 'string', caseExact: false },
  active: { sql: 'x.active', kind: 'boolean', caseExact: true },
  'meta.created': { sql: 'x.created_at', kind: 'datetime', caseExact: true },
  'meta.lastmodified': { sql: 'x.updated_at', kind: 'datetime', caseExact: true },
};

/** Every user has one email, of type "work", primary. */
export const USER_VALUE_PATHS: ValuePathTable = {
  emails: {
    value: { sql: 'x.email', kind: 'string', caseExact: false },
    type: { sql: `'work'::text`, kind: 'string', caseExact: false },
    primary: { sql: 'true', kind: 'boolean', caseExact: true },
  },
};

/** The query parameters of a list or a read (RFC 7644 §3.4.2), as the client sent them. */
export interface ListQuery {
  filter?: unknown;
  startIndex?: unknown;
  count?: unknown;
  attributes?: unknown;
  excludedAttributes?: unknown;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An integer query parameter, at least `min`; `fallback` when absent. */
export function int(value: unknown, name: string, min: number, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string' || !/^-?\d{1,9}$/.test(value)) throw ScimError.badRequest('invalidValue', `${name} must be an integer`);
  return Math.max(min, Number(value));
}

/** A string attribute of at most `max` characters, without control characters. */
export function text(value: unknown, field: string, max = 255): string {
  if (typeof value !== 'string' || value.length > max || /[\u0000-\u001f]/.test(value)) throw ScimError.badRequest('invalidValue', `${field} must be a string of at most ${max} characters`);
  return value;
}

/**
 * The lookups IdPs make before every create (`userName eq "…"`, the work email, `externalId eq "…"`),
 * recognised so that the repository reads only the people they can match; any other filter reads
 * the connection's people as it is.
 */
export function lookupCandidates(filter: string): Candidates | undefined {
  const m = /^\s*(userName|emails\[type eq "work"\]\.value|emails\.value|emails|externalId)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  if (!m) return undefined;
  let value: string;
  try {
    value = JSON.parse(`"${m[2]}"`) as string;
  } catch {
    return undefined;
  }
  const attribute = m[1].toLowerCase();
  return attribute === 'username' ? { userName: value } : attribute === 'externalid' ? { externalId: value } : { email: value };
}

/** `attributes` / `excludedAttributes` (RFC 7644 §3.4.2.5) on top-level attributes; id, schemas and meta always stay. */
export function projection(q: ListQuery): (resource: Record<string, unknown>) => Record<string, unknown> {
  const list = (v: unknown, name: string): string[] | null => {
    if (v === undefined || v === '') return null;
    if (typeof v !== 'string' || v.length > 1000) throw ScimError.badRequest('invalidValue', `${name} must be a comma-separated list`);
    return v.split(',').map((s) => s.trim().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').split('.')[0].toLowerCase()).filter(Boolean);
  };
  const include = list(q.attributes, 'attributes');
  const exclude = list(q.excludedAttributes, 'excludedAttributes');
  const always = new Set(['id', 'schemas', 'meta']);
  return (resource) => {
    if (!include && !exclude) return resource;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(resource)) {
      const key = k.toLowerCase();
      if (always.has(key) || (include ? include.includes(key) : !exclude!.includes(key))) out[k] = v;
    }
    return out;
  };
}
