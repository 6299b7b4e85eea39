import { ScimError } from './scim-error';

export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export interface PatchOperation {
  op: 'add' | 'remove' | 'replace';
  path: string | null;
  value: unknown;
}

const MAX_OPERATIONS = 100;

/**
 * The PATCH forms IdPs really send, read into one shape: `op` in any case ("Replace"), paths
 * optional (a path-less add/replace carries an object of attributes), and string booleans
 * ("True"/"False", Entra) turned into booleans by the callers that expect one (`toBoolean`).
 */
export function readPatch(body: unknown): PatchOperation[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a PatchOp object');
  const { schemas, Operations } = body as { schemas?: unknown; Operations?: unknown };
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_OP_SCHEMA)) throw ScimError.badRequest('invalidSyntax', `schemas must include ${PATCH_OP_SCHEMA}`);
  if (!Array.isArray(Operations) || Operations.length === 0) throw ScimError.badRequest('invalidSyntax', 'Operations must be a non-empty array');
  if (Operations.length > MAX_OPERATIONS) throw ScimError.badRequest('tooMany', `At most ${MAX_OPERATIONS} operations per request`);
  return Operations.map((raw, i) => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw ScimError.badRequest('invalidSyntax', `Operations[${i}] must be an object`);
    const { op, path, value } = raw as { op?: unknown; path?: unknown; value?: unknown };
    const kind = typeof op === 'string' ? op.toLowerCase() : '';
    if (kind !== 'add' && kind !== 'remove' && kind !== 'replace') throw ScimError.badRequest('invalidSyntax', `Operations[${i}].op must be add, remove or replace`);
    if (path !== undefined && path !== null && (typeof path !== 'string' || path.length === 0 || path.length > 500)) throw ScimError.badRequest('invalidPath', `Operations[${i}].path is not a valid path`);
    if (kind === 'remove' && !path) throw ScimError.badRequest('noTarget', `Operations[${i}]: remove needs a path`);
    if (kind !== 'remove' && value === undefined) throw ScimError.badRequest('invalidValue', `Operations[${i}] needs a value`);
    return { op: kind, path: (path as string | undefined) ?? null, value };
  });
}

/** true/false, or the strings "True"/"False" in any case (Entra sends them). */
export function toBoolean(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw ScimError.badRequest('invalidValue', `${field} must be a boolean`);
}

/** `members[value eq "id"]` → "id"; anything else null. */
export function memberFilterValue(path: string): string | null {
  const m = /^members\[\s*value\s+eq\s+"([^"\\]{1,100})"\s*\]$/i.exec(path.trim());
  return m ? m[1] : null;
}
