import { canAccessSite, type Principal } from '../../common/principal';
import { PamErrors } from './pam.errors';

/**
 * The organization a PAM request targets: the one given, or the caller's own for an
 * organization-scope session. Partner-scope callers reach several organizations and must
 * name one. An organization outside the caller's reach is answered as not found, like any
 * other tenant's id.
 */
export function targetOrg(principal: Principal, orgId: string | null | undefined): string {
  const id = orgId ?? (principal.scope === 'organization' ? principal.orgId : null);
  if (!id) throw PamErrors.orgRequired();
  requireOrg(principal, id);
  return id;
}

export function requireOrg(principal: Principal, orgId: string): void {
  if (!principal.orgIds.includes(orgId)) throw PamErrors.organizationNotFound();
}

/**
 * Writes of something bound to a site need access to that site. Something organization-wide
 * (a null site: org-wide rules, signer groups, the organization default) reaches every site,
 * so only a caller with every site may write it.
 */
export function requireSiteWrite(principal: Principal, siteId: string | null): void {
  if (!canAccessSite(principal, siteId)) throw PamErrors.siteAccessDenied();
}
