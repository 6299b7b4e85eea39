import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { PrincipalResolver } from '../../auth/principal-resolver.service';
import type { SuccessDto } from '../shared/pagination.dto';
import { mapViolations } from '../shared/pg-error.util';
import { requireOrg } from '../shared/tenant-access.util';
import { TenancyErrors } from '../tenancy.errors';
import { MembershipGrants } from './membership-grant.service';
import type { CreateMembershipDto, CreatePartnerMembershipDto, UpdateMembershipDto, UserResponseDto } from './user.dto';
import { MembershipRow, UserRepository } from './user.repository';
import { UserService } from './user.service';

/** Organization memberships of visible users, and partner memberships (technicians). */
@Injectable()
export class MembershipService {
  constructor(
    private readonly repo: UserRepository,
    private readonly users: UserService,
    private readonly grants: MembershipGrants,
    private readonly audit: AuditService,
    private readonly principals: PrincipalResolver,
  ) {}

  async add(principal: Principal, userId: string, dto: CreateMembershipDto): Promise<UserResponseDto> {
    if (!(await this.repo.find(userId))) throw TenancyErrors.userNotFound();
    requireOrg(principal, dto.orgId);
    if (await this.repo.membership(dto.orgId, userId)) throw TenancyErrors.membershipExists();
    await this.grants.orgRole(principal, dto.orgId, dto.roleId);
    const siteIds = await this.grants.orgSites(principal, dto.orgId, dto.siteIds ?? null);
    await mapViolations(() => this.repo.insertMembership({ orgId: dto.orgId, userId, roleId: dto.roleId, siteIds }), {
      unique: TenancyErrors.membershipExists,
      foreign_key: () => TenancyErrors.roleScopeMismatch('organization'),
    });
    await this.audit.record({ action: 'membership.create', orgId: dto.orgId, resourceType: 'user', resourceId: userId, details: { roleId: dto.roleId, siteIds } });
    return this.users.get(principal, userId);
  }

  async update(principal: Principal, userId: string, orgId: string, dto: UpdateMembershipDto): Promise<UserResponseDto> {
    const current = await this.manageable(principal, userId, orgId);
    if (dto.roleId !== undefined) await this.grants.orgRole(principal, orgId, dto.roleId);
    const siteIds = dto.siteIds === undefined ? undefined : await this.grants.orgSites(principal, orgId, dto.siteIds);
    await mapViolations(() => this.repo.updateMembership(orgId, userId, { roleId: dto.roleId, siteIds }), {
      foreign_key: () => TenancyErrors.roleScopeMismatch('organization'),
    });
    this.principals.forgetUser(userId);
    await this.audit.record({
      action: 'membership.update',
      orgId,
      resourceType: 'user',
      resourceId: userId,
      details: { changed: Object.keys(dto), before: { roleId: current.role_id, siteIds: current.site_ids }, ...dto },
    });
    return this.users.get(principal, userId);
  }

  async remove(principal: Principal, userId: string, orgId: string): Promise<SuccessDto> {
    const current = await this.manageable(principal, userId, orgId);
    await this.repo.deleteMembership(orgId, userId);
    // Their sessions and the keys they created lose this organization now, on this instance.
    this.principals.forgetUser(userId);
    await this.audit.record({ action: 'membership.delete', orgId, resourceType: 'user', resourceId: userId, details: { roleId: current.role_id } });
    return { success: true };
  }

  async createPartnerMembership(principal: Principal, dto: CreatePartnerMembershipDto): Promise<UserResponseDto> {
    const partnerId = principal.partnerId;
    if (principal.scope !== 'partner' || !partnerId) throw TenancyErrors.partnerScopeRequired('Adding a technician');
    const newUser = this.newUserFields(dto);
    await this.grants.partnerRole(principal, partnerId, dto.roleId);
    const orgIds = this.grantedOrgs(principal, dto);
    const sites = await this.grants.partnerSites(principal, dto.siteIds ?? null);
    if (sites && dto.orgAccess === 'selected' && sites.some((s) => !orgIds.includes(s.orgId))) throw TenancyErrors.siteOutsideOrgAccess();

    let userId: string;
    if (newUser) {
      userId = await this.users.insertUser(newUser);
    } else {
      userId = dto.userId as string;
      if (!(await this.repo.find(userId))) throw TenancyErrors.userNotFound();
    }
    // A user is a technician of at most one partner; that membership may be out of sight.
    await mapViolations(() => this.repo.insertPartnerMembership({ partnerId, userId, roleId: dto.roleId, orgAccess: dto.orgAccess, orgIds, sites }), {
      unique: TenancyErrors.membershipExists,
      foreign_key: () => TenancyErrors.roleScopeMismatch('partner'),
    });
    if (newUser) {
      await this.audit.record({ action: 'user.create', partnerId, resourceType: 'user', resourceId: userId, details: { email: newUser.email } });
    }
    await this.audit.record({
      action: 'partner_membership.create',
      partnerId,
      resourceType: 'user',
      resourceId: userId,
      details: { roleId: dto.roleId, orgAccess: dto.orgAccess, orgIds, siteIds: dto.siteIds ?? null },
    });
    return this.users.get(principal, userId);
  }

  private async manageable(principal: Principal, userId: string, orgId: string): Promise<MembershipRow> {
    requireOrg(principal, orgId);
    const current = await this.repo.membership(orgId, userId);
    if (!current) throw TenancyErrors.membershipNotFound();
    await this.grants.requireManageable(principal, current);
    return current;
  }

  /** Either an existing user (userId) or the fields of a new one (email and name), never both. */
  private newUserFields(dto: CreatePartnerMembershipDto): { email: string; name: string; password?: string } | null {
    const given = (['email', 'name', 'password'] as const).filter((k) => dto[k] !== undefined);
    if (dto.userId !== undefined) {
      if (given.length) throw TenancyErrors.invalidField(given[0], `${given[0]} must be absent when userId is given`);
      return null;
    }
    if (dto.email === undefined) throw TenancyErrors.invalidField('email', 'email is required when userId is absent');
    if (dto.name === undefined) throw TenancyErrors.invalidField('name', 'name is required when userId is absent');
    return { email: dto.email, name: dto.name, password: dto.password };
  }

  /**
   * A technician reaches only organizations the caller reaches: `all` (every organization, also
   * future ones) is for callers who have it themselves.
   */
  private grantedOrgs(principal: Principal, dto: CreatePartnerMembershipDto): string[] {
    if (dto.orgAccess === 'all') {
      if (dto.orgIds !== undefined) throw TenancyErrors.invalidField('orgIds', 'orgIds must be absent when orgAccess is all');
      if (!principal.partnerWide) throw TenancyErrors.orgAccessEscalation();
      return [];
    }
    if (!dto.orgIds) throw TenancyErrors.invalidField('orgIds', 'orgIds is required when orgAccess is selected');
    for (const orgId of dto.orgIds) requireOrg(principal, orgId);
    return dto.orgIds;
  }
}
