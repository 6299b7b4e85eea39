import { requireOwnerWrite as requirePartnerWideWrite, type Principal } from '../../common/principal';
import { requireOrg, requireSite, targetOrg } from '../../common/tenant-access.util';
import { ContentErrors } from './content.errors';

/** Custom fields, scripts and policies are owned by the partner (all its organizations) or by one organization. */
export type OwnerScope = 'partner' | 'organization';

export interface Owner {
  partnerId: string | null;
  orgId: string | null;
}

export function ownerScopeOf(owner: Owner): OwnerScope {
  return owner.orgId ? 'organization' : 'partner';
}

/**
 * The owner of a new row. Partner-wide rows need a partner-scope session reaching every
 * organization of the partner (checked here, before any check that reads other organizations in
 * system context, such as a key clash); organization rows need the organization and, since they
 * reach every site of it, access to all its sites.
 */
export function newOwner(principal: Principal, scope: OwnerScope | undefined, orgId: string | undefined, what: string): Owner {
  if (scope === 'partner') {
    if (principal.scope !== 'partner' || !principal.partnerId) throw ContentErrors.partnerScopeRequired(`A partner-wide ${what}`);
    if (orgId) throw ContentErrors.invalidField('orgId', `orgId must be absent for a partner-wide ${what}`);
    const owner = { partnerId: principal.partnerId, orgId: null };
    requirePartnerWideWrite(principal, owner);
    requireSite(principal, null);
    return owner;
  }
  const org = targetOrg(principal, orgId);
  requireSite(principal, null);
  return { partnerId: null, orgId: org };
}

/**
 * Changing an existing row: the same rules as creating it, and for a partner-wide row access to
 * every organization of the partner (the database enforces that too, but only at the write, after
 * the checks that read other organizations in system context).
 */
export function requireOwnerWrite(principal: Principal, owner: Owner, what: string): void {
  if (owner.orgId) requireOrg(principal, owner.orgId);
  else if (principal.scope !== 'partner' || principal.partnerId !== owner.partnerId) throw ContentErrors.partnerScopeRequired(`Changing a partner-wide ${what}`);
  requirePartnerWideWrite(principal, owner);
  requireSite(principal, null);
}
