import { canAccessSite, Principal } from './principal';
import { CommonErrors } from './errors/common.errors';

/**
 * The organization a request targets: the given one, or the caller's own for an
 * organization-scope session. An organization outside the caller's reach is answered as
 * not found, like any other tenant's id.
 */
export function targetOrg(principal: Principal, orgId: string | null | undefined): string {
  const id = orgId ?? (principal.scope === 'organization' ? principal.orgId : null);
  if (!id) throw CommonErrors.orgIdRequired();
  requireOrg(principal, id);
  return id;
}

export function requireOrg(principal: Principal, orgId: string): void {
  if (!principal.orgIds.includes(orgId)) throw CommonErrors.organizationNotFound();
}

/** Writes touching a site need access to it; a null site (organization-wide) needs every site. */
export function requireSite(principal: Principal, siteId: string | null): void {
  if (!canAccessSite(principal, siteId)) throw CommonErrors.siteAccessDenied();
}

/**
 * A site-restricted caller may only hand out a reach inside their own: `null` (every site) is
 * beyond it, and so is any site they lack.
 */
export function requireSiteSubset(principal: Principal, siteIds: readonly string[] | null): void {
  if (principal.allowedSiteIds === null) return;
  if (siteIds === null) throw CommonErrors.siteAccessDenied();
  for (const id of siteIds) requireSite(principal, id);
}
