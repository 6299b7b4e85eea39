import { createHash } from 'node:crypto';
import { ScimError } from './scim-error';

/** Attributes a client never writes (RFC 7643 §3.1, §4.1.2): a PATCH naming one is 400 `mutability`. */
export const READ_ONLY = /^(id|groups|meta(\..+)?)$/i;

/**
 * The resource with `meta.version` (RFC 7644 §3.14): a weak entity tag over what the resource
 * says, its members apart (they move the group's lastModified, and a listing may leave them out).
 */
export function versioned<T extends { meta: Record<string, unknown> }>(resource: T): T {
  const { meta, members: _members, ...rest } = resource as T & { members?: unknown };
  const digest = createHash('sha256').update(JSON.stringify({ ...rest, lastModified: meta.lastModified })).digest('base64url').slice(0, 22);
  return { ...resource, meta: { ...meta, version: `W/"${digest}"` } };
}

/** `If-Match` honoured (RFC 7644 §3.14, RFC 9110 §13.1.1): absent or `*` passes; otherwise one of its tags must name the current version, else 412. */
export function requireVersion(resource: Record<string, unknown>, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  const current = bare(String((resource.meta as Record<string, unknown> | undefined)?.version));
  if (!ifMatch.split(',').some((tag) => bare(tag) === current)) throw new ScimError(412, 'The resource has changed since the version named in If-Match');
}
