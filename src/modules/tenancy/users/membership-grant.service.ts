import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { requireGrantable } from '../roles/role.service';
import type { RoleEntity } from '../roles/role.entity';
import { RoleRepository } from '../roles/role.repository';
import { requireSiteSubset } from '../../../common/tenant-access.util';
import { SiteRepository } from '../sites/site.repository';
import { TenancyErrors } from '../tenancy.errors';
import type { MembershipView } from './user.repository';

/**
 * What a caller may grant: a role of the membership's own organization (or partner) holding no
 * permission beyond the caller's, and sites of that organization within the caller's sites.
 * The composite foreign keys enforce the ownership too; checking first gives clear errors.
 */
@Injectable()
export class MembershipGrantService {
  constructor(
    private readonly roles: RoleRepository,
    private readonly sites: SiteRepository,
  ) {}

  async orgRole(principal: Principal, orgId: string, roleId: string): Promise<RoleEntity> {
    const role = await this.roles.find(roleId);
    if (!role) throw TenancyErrors.roleNotFound();
    if (role.scope !== 'organization' || role.orgId !== orgId) throw TenancyErrors.roleScopeMismatch('organization');
    requireGrantable(principal, role.permissions);
    return role;
  }

  async partnerRole(principal: Principal, partnerId: string, roleId: string): Promise<RoleEntity> {
    const role = await this.roles.find(roleId);
    if (!role) throw TenancyErrors.roleNotFound();
    if (role.scope !== 'partner' || role.partnerId !== partnerId) throw TenancyErrors.roleScopeMismatch('partner');
    requireGrantable(principal, role.permissions);
    return role;
  }

  /** `siteIds` null: every site of the organization. */
  async orgSites(principal: Principal, orgId: string, siteIds: readonly string[] | null): Promise<readonly string[] | null> {
    if (siteIds) {
      const found = await this.sites.findMany(siteIds);
      if (found.length !== siteIds.length || found.some((s) => s.orgId !== orgId)) throw TenancyErrors.siteNotFound();
    }
    requireSiteSubset(principal, siteIds);
    return siteIds;
  }

  /** Sites of any organization the caller reaches, with the organization of each; null: every site. */
  async partnerSites(principal: Principal, siteIds: readonly string[] | null): Promise<{ orgId: string; siteId: string }[] | null> {
    if (!siteIds) {
      requireSiteSubset(principal, null);
      return null;
    }
    const found = await this.sites.findMany(siteIds);
    if (found.length !== siteIds.length) throw TenancyErrors.siteNotFound();
    requireSiteSubset(principal, siteIds);
    return found.map((s) => ({ orgId: s.orgId, siteId: s.id }));
  }

  /** A membership reaching further than the caller (role or sites) is out of their hands. */
  async requireManageable(principal: Principal, m: MembershipView): Promise<void> {
    const role = await this.roles.find(m.roleId);
    requireGrantable(principal, role?.permissions ?? ['*']);
    requireSiteSubset(principal, m.siteIds);
  }
}
