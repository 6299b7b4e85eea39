import type { TenantScope } from '../infra/database/tenant-scope';

export type SessionScope = 'organization' | 'partner' | 'system';

/** Who is calling, resolved by the auth guard before the handler's transaction opens. */
export interface Principal {
  kind: 'user' | 'api_key' | 'agent' | 'anonymous';
  userId: string | null;
  sessionId: string | null;
  apiKeyId: string | null;
  scope: SessionScope | null;
  /** Organization of an organization-scope session or key; null otherwise. */
  orgId: string | null;
  /** Partner of a partner-scope session or key; for organization scope, the organization's partner. */
  partnerId: string | null;
  orgIds: string[];
  partnerIds: string[];
  permissions: string[];
  mfa: boolean;
  /** null: every site of the accessible organizations. */
  allowedSiteIds: string[] | null;
  agent: { agentId: string; deviceId: string; orgId: string; siteId: string } | null;
}

export const ANONYMOUS: Principal = Object.freeze({
  kind: 'anonymous',
  userId: null,
  sessionId: null,
  apiKeyId: null,
  scope: null,
  orgId: null,
  partnerId: null,
  orgIds: [],
  partnerIds: [],
  permissions: [],
  mfa: false,
  allowedSiteIds: null,
  agent: null,
}) as Principal;

export function scopeOf(p: Principal): TenantScope {
  return { scope: p.scope, orgIds: p.orgIds, partnerIds: p.partnerIds, userId: p.userId };
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
