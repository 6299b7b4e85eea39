import type { TenantScope } from '../infra/database/tenant-scope';
import { AppException } from './errors/app.exception';

export type SessionScope = 'organization' | 'partner' | 'system';

/** Who is calling, resolved by the auth guard before the handler's transaction opens. */
export interface Principal {
  kind: 'user' | 'api_key' | 'agent' | 'scim' | 'anonymous';
  /**
   * The person on whose behalf the request acts: the signed-in user, or the creator of an API key.
   * Every separation-of-duties check and every "who decided" field uses it. Null for agents.
   */
  userId: string | null;
  sessionId: string | null;
  apiKeyId: string | null;
  /**
   * A SCIM connection's bearer token (kind 'scim'): the connection acts with the authority of the
   * administrator who created it or last rotated its token (userId), re-checked on every request.
   */
  scimConnectionId: string | null;
  scope: SessionScope | null;
  /** Organization of an organization-scope session or key; null otherwise. */
  orgId: string | null;
  /** Partner of a partner-scope session or key; for organization scope, the organization's partner. */
  partnerId: string | null;
  orgIds: string[];
  partnerIds: string[];
  permissions: string[];
  mfa: boolean;
  /**
   * The caller reaches every organization of its partner (a technician with all-organization
   * access, or a partner-wide key acting for one), so it may create, change and delete
   * partner-owned objects: those apply to every organization, including ones a
   * selected-organizations technician cannot reach. The database enforces the same rule.
   */
  partnerWide: boolean;
  /** null: every site of the accessible organizations. */
  allowedSiteIds: string[] | null;
  agent: { agentId: string; deviceId: string; orgId: string; siteId: string } | null;
}

export const ANONYMOUS: Principal = Object.freeze({
  kind: 'anonymous',
  userId: null,
  sessionId: null,
  apiKeyId: null,
  scimConnectionId: null,
  scope: null,
  orgId: null,
  partnerId: null,
  orgIds: [],
  partnerIds: [],
  permissions: [],
  mfa: false,
  partnerWide: false,
  allowedSiteIds: null,
  agent: null,
}) as Principal;

export function scopeOf(p: Principal): TenantScope {
  return { scope: p.scope, orgIds: p.orgIds, partnerIds: p.partnerIds, userId: p.userId, partnerWide: p.partnerWide, siteIds: p.allowedSiteIds, actorId: p.userId };
}

/** `*`, `devices:*` and exact strings; every required permission must be held. */
export function hasPermission(held: readonly string[], required: string): boolean {
  const [resource] = required.split(':');
  return held.some((p) => p === '*' || p === required || p === `${resource}:*`);
}

export function canAccessSite(p: Principal, siteId: string | null | undefined): boolean {
  if (p.allowedSiteIds === null) return true;
  return !!siteId && p.allowedSiteIds.includes(siteId);
}

/** The owner columns of a row that an organization or a partner owns. */
export interface RowOwner {
  orgId: string | null;
  partnerId: string | null;
}

export const PARTNER_WIDE_WRITE_REFUSED = 'Creating, changing or deleting a partner-wide object needs access to all organizations of the partner';

/**
 * The one rule for partner-owned objects (providers, login branding, partner roles, keys,
 * policies and assignments, scripts, custom fields, imports): a partner-owned row acts on every
 * organization of the partner, so only a partner-wide caller may write it. Organization-owned
 * rows are governed by row-level security alone. The database enforces the same rule
 * (app_has_partner_write) and its refusal is answered with the same 403; services call this
 * first only where validation or network work would otherwise come before the write.
 */
export function requireOwnerWrite(p: Principal, owner: RowOwner): void {
  if (owner.orgId === null && !p.partnerWide) throw AppException.forbidden('forbidden', PARTNER_WIDE_WRITE_REFUSED);
}
