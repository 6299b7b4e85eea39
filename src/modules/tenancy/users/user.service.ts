import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { PasswordService } from '../../../infra/crypto/password.service';
import { requireOrg, targetOrg } from '../../../common/tenant-access.util';
import { TenancyErrors } from '../tenancy.errors';
import { MembershipGrantService } from './membership-grant.service';
import type { CreateUserDto, ListUsersQueryDto, UserDto, UserListDto, UserResponseDto } from './user.dto';
import { MembershipView, PartnerMembershipView, UserRepository, VisibleUser } from './user.repository';

function toDto(u: VisibleUser, memberships: MembershipView[], partner: PartnerMembershipView | undefined): UserDto {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    status: u.status,
    mfaEnabled: u.mfaEnabled,
    memberships: memberships.map((m) => ({ orgId: m.orgId, roleId: m.roleId, siteIds: m.siteIds, createdAt: m.createdAt.toISOString() })),
    partnerMembership: partner
      ? {
          partnerId: partner.partnerId,
          roleId: partner.roleId,
          orgAccess: partner.orgAccess,
          orgIds: partner.orgIds,
          siteIds: partner.siteIds,
          createdAt: partner.createdAt.toISOString(),
        }
      : null,
    createdAt: u.createdAt.toISOString(),
    updatedAt: u.updatedAt.toISOString(),
  };
}

/**
 * The identity behind an email given to add a user: a new account (`created`), or an existing
 * identity the caller's tenant cannot see, which only an invitation may reach.
 */
export interface AddedIdentity {
  id: string;
  created: boolean;
}

/** Users of the caller's organizations and partner, and the creation of new ones. */
@Injectable()
export class UserService {
  constructor(
    private readonly repo: UserRepository,
    private readonly grants: MembershipGrantService,
    private readonly passwords: PasswordService,
    private readonly audit: AuditService,
    private readonly tx: TenantTransactionService,
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

  /**
   * A new account with its first membership; for the email of an identity held out of the
   * caller's sight, an invitation instead (see `identityFor`). Both answer the same, with what the
   * caller wrote, and leave the same audit row in the caller's tenant.
   */
  async create(principal: Principal, dto: CreateUserDto): Promise<UserResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    await this.grants.orgRole(principal, orgId, dto.roleId);
    const siteIds = await this.grants.orgSites(principal, orgId, dto.siteIds ?? null);
    const identity = await this.identityFor(dto);
    if (identity.created) {
      await this.repo.insertMembership({ orgId, userId: identity.id, roleId: dto.roleId, siteIds });
    } else {
      await this.repo.insertOrgInvitation({ orgId, userId: identity.id, roleId: dto.roleId, siteIds, email: dto.email, name: dto.name, invitedBy: principal.userId });
    }
    await this.audit.record({ action: 'user.create', orgId, resourceType: 'user', resourceId: identity.id, details: { email: dto.email, roleId: dto.roleId, siteIds } });
    return this.get(principal, identity.id);
  }

  /**
   * The identity for an email being added. Users are global (one per email), so an email may be
   * held by a user of another tenant: the caller must not learn that (issue 13, 10b), nor gain
   * anything over that user. So:
   *  - an email the caller already sees (a user of its tenant, or one it invited) is 409 email_taken;
   *  - a free email becomes a new account with the given name and password;
   *  - an email held out of sight is answered as if it were free, but the existing identity is
   *    left untouched (its password, name and status are never set from here) and only an
   *    invitation may reach it, which its owner accepts signed in as themselves.
   * The password is hashed in every case, so both answers take the same time.
   */
  async identityFor(u: { email: string; name: string; password?: string }): Promise<AddedIdentity> {
    if (await this.repo.emailVisible(u.email)) throw TenancyErrors.emailTaken();
    const id = randomUUID();
    const passwordHash = u.password ? await this.passwords.hash(u.password) : null;
    if ((await this.repo.insertUserIfNew({ id, email: u.email, name: u.name, passwordHash })) === 1) return { id, created: true };
    const held = await this.tx.withSystemContext('find the identity holding an email the caller cannot see, to invite it', () => this.repo.idByEmail(u.email));
    // Deleted in between, or created by a concurrent request of the caller's own tenant (now visible): a conflict.
    if (!held || (await this.repo.isVisibleIdentity(held))) throw TenancyErrors.emailTaken();
    return { id: held, created: false };
  }

  private async withMemberships(principal: Principal, rows: VisibleUser[]): Promise<UserDto[]> {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    const memberships = await this.repo.memberships(ids, principal.orgIds);
    const partners = await this.repo.partnerMemberships(ids, principal.partnerIds);
    return rows.map((u) =>
      toDto(
        u,
        memberships.filter((m) => m.userId === u.id),
        partners.find((p) => p.userId === u.id),
      ),
    );
  }
}
