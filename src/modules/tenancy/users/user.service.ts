import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { PasswordService } from '../../auth/password.service';
import { mapViolations } from '../shared/pg-error.util';
import { requireOrg, targetOrg } from '../shared/tenant-access.util';
import { TenancyErrors } from '../tenancy.errors';
import { MembershipGrants } from './membership-grant.service';
import type { CreateUserDto, ListUsersQueryDto, UserDto, UserListDto, UserResponseDto } from './user.dto';
import { MembershipRow, PartnerMembershipRow, UserRepository, UserRow } from './user.repository';

function toDto(u: UserRow, memberships: MembershipRow[], partner: PartnerMembershipRow | undefined): UserDto {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    status: u.status,
    mfaEnabled: u.mfa_enabled,
    memberships: memberships.map((m) => ({ orgId: m.org_id, roleId: m.role_id, siteIds: m.site_ids, createdAt: m.created_at.toISOString() })),
    partnerMembership: partner
      ? {
          partnerId: partner.partner_id,
          roleId: partner.role_id,
          orgAccess: partner.org_access,
          orgIds: partner.org_ids,
          siteIds: partner.site_ids,
          createdAt: partner.created_at.toISOString(),
        }
      : null,
    createdAt: u.created_at.toISOString(),
    updatedAt: u.updated_at.toISOString(),
  };
}

/** Users of the caller's organizations and partner, and the creation of new ones. */
@Injectable()
export class UserService {
  constructor(
    private readonly repo: UserRepository,
    private readonly grants: MembershipGrants,
    private readonly passwords: PasswordService,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal, q: ListUsersQueryDto): Promise<UserListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.list({ orgId: q.orgId, search: q.search }, { limit, offset: (page - 1) * limit });
    return { success: true, users: await this.withMemberships(principal, rows), pagination: { page, limit, total } };
  }

  async get(principal: Principal, id: string): Promise<UserResponseDto> {
    const row = await this.repo.find(id);
    if (!row) throw TenancyErrors.userNotFound();
    const [user] = await this.withMemberships(principal, [row]);
    return { success: true, user };
  }

  async create(principal: Principal, dto: CreateUserDto): Promise<UserResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    await this.grants.orgRole(principal, orgId, dto.roleId);
    const siteIds = await this.grants.orgSites(principal, orgId, dto.siteIds ?? null);
    const id = await this.insertUser(dto);
    await this.repo.insertMembership({ orgId, userId: id, roleId: dto.roleId, siteIds });
    await this.audit.record({ action: 'user.create', orgId, resourceType: 'user', resourceId: id, details: { email: dto.email, roleId: dto.roleId, siteIds } });
    return this.get(principal, id);
  }

  /**
   * Inserts a user whose id is chosen here: row-level security hides the row until a membership
   * exists, so it cannot be read back yet. A taken email is a conflict, whichever tenant holds it.
   */
  async insertUser(u: { email: string; name: string; password?: string }): Promise<string> {
    const id = randomUUID();
    const passwordHash = u.password ? await this.passwords.hash(u.password) : null;
    await mapViolations(() => this.repo.insertUser({ id, email: u.email, name: u.name, passwordHash }), { unique: TenancyErrors.emailTaken });
    return id;
  }

  private async withMemberships(principal: Principal, rows: UserRow[]): Promise<UserDto[]> {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    const memberships = await this.repo.memberships(ids, principal.orgIds);
    const partners = await this.repo.partnerMemberships(ids, principal.partnerIds);
    return rows.map((u) =>
      toDto(
        u,
        memberships.filter((m) => m.user_id === u.id),
        partners.find((p) => p.user_id === u.id),
      ),
    );
  }
}
