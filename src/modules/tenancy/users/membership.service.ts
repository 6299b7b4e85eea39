import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { PrincipalCache } from '../../../common/principal-cache';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg } from '../../../common/tenant-access.util';
import { TenancyErrors } from '../tenancy.errors';
import { MembershipGrantService } from './membership-grant.service';
import { PersonAuthorityService } from './person-authority.service';
import type { CreateMembershipDto, CreatePartnerMembershipDto, UpdateMembershipDto, UserResponseDto } from './user.dto';
import { MembershipView, UserRepository } from './user.repository';
import { UserService } from './user.service';

/** Organization memberships of visible users, and partner memberships (technicians). */
@Injectable()
export class MembershipService {
  constructor(
    private readonly repo: UserRepository,
    private readonly users: UserService,
    private readonly grants: MembershipGrantService,
    private readonly audit: AuditService,
    private readonly principals: PrincipalCache,
    private readonly tx: TenantTransactionService,
    private readonly authority: PersonAuthorityService,
  ) {}

  /**
   * Another organization for a user the caller sees. A user the caller sees only through an
   * invitation (an identity of another tenant that has not accepted) gets another invitation, not
   * a membership: the answer is the same.
   */
  async add(principal: Principal, userId: string, dto: CreateMembershipDto): Promise<UserResponseDto> {
    const user = await this.repo.find(userId);
    if (!user) throw TenancyErrors.userNotFound();
    requireOrg(principal, dto.orgId);
    if (await this.repo.membership(dto.orgId, userId)) throw TenancyErrors.membershipExists();
    await this.grants.orgRole(principal, dto.orgId, dto.roleId);
    const siteIds = await this.grants.orgSites(principal, dto.orgId, dto.siteIds ?? null);
    const member = { orgId: dto.orgId, userId, roleId: dto.roleId, siteIds };
    await mapViolations(
      async () =>
        (await this.repo.isVisibleIdentity(userId))
          ? this.repo.insertMembership(member)
          : this.repo.insertOrgInvitation({ ...member, email: user.email, name: user.name, invitedBy: principal.userId }),
      { unique: TenancyErrors.membershipExists, foreign_key: () => TenancyErrors.roleScopeMismatch('organization') },
    );
    await this.audit.record({ action: 'membership.create', orgId: dto.orgId, resourceType: 'user', resourceId: userId, details: { roleId: dto.roleId, siteIds } });
    return this.users.get(principal, userId);
  }

  async update(principal: Principal, userId: string, orgId: string, dto: UpdateMembershipDto): Promise<UserResponseDto> {
    const current = await this.manageable(principal, userId, orgId);
    if (dto.roleId !== undefined) await this.grants.orgRole(principal, orgId, dto.roleId);
    const siteIds = dto.siteIds === undefined ? undefined : await this.grants.orgSites(principal, orgId, dto.siteIds);
    const patch = { roleId: dto.roleId, siteIds };
    await mapViolations(
      async () => (current.pending ? this.repo.updateOrgInvitation(orgId, userId, patch) : this.repo.updateMembership(orgId, userId, patch)),
      { foreign_key: () => TenancyErrors.roleScopeMismatch('organization') },
    );
    this.principals.forgetUser(userId);
    await this.audit.record({
      action: 'membership.update',
      orgId,
      resourceType: 'user',
      resourceId: userId,
      details: { changed: Object.keys(dto), before: { roleId: current.roleId, siteIds: current.siteIds }, ...dto },
    });
    return this.users.get(principal, userId);
  }

  async remove(principal: Principal, userId: string, orgId: string): Promise<SuccessDto> {
    const current = await this.manageable(principal, userId, orgId);
    if (current.pending) await this.repo.deleteOrgInvitation(orgId, userId);
    else await this.repo.deleteMembership(orgId, userId);
    // Their sessions and the keys they created lose this organization now, on this instance.
    this.principals.forgetUser(userId);
    await this.audit.record({ action: 'membership.delete', orgId, resourceType: 'user', resourceId: userId, details: { roleId: current.roleId } });
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

    // A new account, or an identity the caller sees: a membership. An identity held out of sight
    // (an email of another tenant, or a user the caller only invited): an invitation, answered the same.
    let userId: string;
    let invite: { email: string; name: string } | null = null;
    if (newUser) {
      const identity = await this.users.identityFor(newUser);
      userId = identity.id;
      if (!identity.created) invite = newUser;
    } else {
      userId = dto.userId as string;
      const user = await this.repo.find(userId);
      if (!user) throw TenancyErrors.userNotFound();
      // A technician of another partner is out of sight too: refusing would tell the caller so.
      if (!(await this.repo.isVisibleIdentity(userId)) || (await this.technicianElsewhere(userId, partnerId))) invite = user;
    }
    const member = { partnerId, userId, roleId: dto.roleId, orgAccess: dto.orgAccess, orgIds };
    // A user is a technician of at most one partner; that membership may be out of sight, so an
    // identity of another tenant is only ever invited (its acceptance reports the conflict to its owner).
    await mapViolations(
      async () =>
        invite
          ? this.repo.insertPartnerInvitation({ ...member, siteIds: sites?.map((s) => s.siteId) ?? null, email: invite.email, name: invite.name, invitedBy: principal.userId })
          : this.repo.insertPartnerMembership({ ...member, sites }),
      { unique: TenancyErrors.membershipExists, foreign_key: () => TenancyErrors.roleScopeMismatch('partner') },
    );
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

  private technicianElsewhere(userId: string, partnerId: string): Promise<boolean> {
    return this.tx.withSystemContext('whether a visible user is a technician of another partner, which the caller must not learn', async () => {
      const partner = await this.repo.partnerOf(userId);
      return partner !== null && partner !== partnerId;
    });
  }

  private async manageable(principal: Principal, userId: string, orgId: string): Promise<MembershipView> {
    requireOrg(principal, orgId);
    const current = await this.repo.membership(orgId, userId);
    if (!current) throw TenancyErrors.membershipNotFound();
    await this.grants.requireManageable(principal, current);
    // The caller's credential may not exceed the membership (above); the person behind it must also have authority over everything the member holds here.
    await this.authority.requireMayActOn(principal.userId, userId, { kind: 'tenant', tenant: { orgId } });
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
