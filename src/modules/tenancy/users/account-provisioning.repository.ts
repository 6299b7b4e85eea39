import { Injectable } from '@nestjs/common';
import { IsNull, Not } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { OrganizationMembershipEntity, OrganizationMembershipSiteEntity } from './organization-membership.entity';
import { PartnerMembershipEntity } from './partner-membership.entity';
import { UserEntity } from './user.entity';

/** Where a provisioned membership lives: an organization, or (orgId null) a partner. */
export interface MembershipScope {
  orgId: string | null;
  partnerId: string | null;
}

/** What a deprovisioning ended in the membership's scope, for the caller's audit row and its principal cache. */
export interface DeprovisionCounts {
  sessionIds: string[];
  sessionsRevoked: number;
  apiKeysRevoked: number;
  pendingRequestsRevoked: number;
  elevationsRevoked: number;
  revokeCommandsQueued: number;
}

/** Accounts and memberships written by provisioning (SCIM, group-to-role mapping at sign-in). */
@Injectable()
export class AccountProvisioningRepository {
  constructor(private readonly db: DbService) {}

  /**
   * A new account, or null when the address is taken (by an account this tenant may not see). One
   * plain statement, so that a scope switch queued before it travels in the same message.
   */
  async createUser(email: string, name: string): Promise<string | null> {
    // The only unique key a new row can meet is lower(email): its id is generated.
    const row = await this.db.one<{ id: string }>(`INSERT INTO users (email, name) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id`, [email, name]);
    return row?.id ?? null;
  }

  /** An active account without a password (its holder sets one through a reset link). */
  async createActiveUser(email: string, name: string): Promise<string> {
    const users = await this.db.repo(UserEntity);
    const user = users.create({ email, name, status: 'active' });
    await users.insert(user);
    return user.id;
  }

  async addPartnerMember(partnerId: string, userId: string, roleId: string): Promise<void> {
    await (await this.db.repo(PartnerMembershipEntity)).insert({ partnerId, userId, roleId, orgAccess: 'all', siteRestricted: false });
  }

  /** 1 when the email or the name changed (updated_at is set then), 0 when both were already so. */
  async updateProfile(userId: string, email: string, name: string): Promise<number> {
    const users = await this.db.repo(UserEntity);
    const { affected } = await users.update(
      [
        { id: userId, email: Not(email) },
        { id: userId, name: Not(name) },
      ],
      { email, name },
    );
    return affected ?? 0;
  }

  async updateName(userId: string, name: string): Promise<number> {
    return (await (await this.db.repo(UserEntity)).update({ id: userId, name: Not(name) }, { name })).affected ?? 0;
  }

  /** 1 when added, 0 when already a member. */
  addOrgMember(orgId: string, userId: string, roleId: string): Promise<number> {
    return this.db.exec(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [orgId, userId, roleId]);
  }

  /**
   * 1 when the membership was suspended and now counts again. With a connection, only a suspension
   * that connection made (or one made before suspensions recorded their connection) is lifted.
   */
  async reactivate(scope: MembershipScope, userId: string, connectionId: string | null = null): Promise<number> {
    const lift = `SET suspended_at = NULL, suspended_by_connection_id = NULL
        WHERE user_id = $2 AND suspended_at IS NOT NULL AND ($3::uuid IS NULL OR suspended_by_connection_id IS NULL OR suspended_by_connection_id = $3)`;
    return scope.orgId
      ? this.db.exec(`UPDATE organization_memberships ${lift} AND org_id = $1`, [scope.orgId, userId, connectionId])
      : this.db.exec(`UPDATE partner_memberships ${lift} AND partner_id = $1`, [scope.partnerId, userId, connectionId]);
  }

  /** The SCIM connection that suspended the membership, if one did; undefined when it is not suspended. */
  async suspendedBy(scope: MembershipScope, userId: string): Promise<string | null | undefined> {
    const row = scope.orgId
      ? await this.db.one<{ suspended_at: Date | null; by: string | null }>(
          `SELECT suspended_at, suspended_by_connection_id AS by FROM organization_memberships WHERE org_id = $1 AND user_id = $2`,
          [scope.orgId, userId],
        )
      : await this.db.one<{ suspended_at: Date | null; by: string | null }>(
          `SELECT suspended_at, suspended_by_connection_id AS by FROM partner_memberships WHERE partner_id = $1 AND user_id = $2`,
          [scope.partnerId, userId],
        );
    return row?.suspended_at ? row.by : undefined;
  }

  /** Records the connection behind a suspension in force, unless another connection's is already recorded. */
  async recordSuspendingConnection(scope: MembershipScope, userId: string, connectionId: string): Promise<number> {
    const record = `SET suspended_by_connection_id = $3 WHERE user_id = $2 AND suspended_at IS NOT NULL AND suspended_by_connection_id IS NULL`;
    return scope.orgId
      ? this.db.exec(`UPDATE organization_memberships ${record} AND org_id = $1`, [scope.orgId, userId, connectionId])
      : this.db.exec(`UPDATE partner_memberships ${record} AND partner_id = $1`, [scope.partnerId, userId, connectionId]);
  }

  /** Keeps the time of a suspension already in force. */
  async suspend(scope: MembershipScope, userId: string): Promise<number> {
    const suspendedAt = () => 'coalesce(suspended_at, now())';
    const { affected } = scope.orgId
      ? await (await this.db.repo(OrganizationMembershipEntity)).update({ orgId: scope.orgId, userId }, { suspendedAt })
      : await (await this.db.repo(PartnerMembershipEntity)).update({ partnerId: scope.partnerId as string, userId }, { suspendedAt });
    return affected ?? 0;
  }

  /**
   * scim_deprovision_user, one statement: suspends the membership and ends, in its scope, the
   * person's sessions (their refresh tokens and unredeemed sign-in codes with them), the API keys
   * they created, the requests they filed that are still pending and the elevations they approved
   * still in their window (FUNCTION_OWNERS lists what it writes on other modules' behalf). Null
   * when the function answers nothing.
   */
  deprovision(scope: MembershipScope, userId: string, reason: string): Promise<DeprovisionCounts | null> {
    return this.db
      .one<{ r: DeprovisionCounts }>(`SELECT scim_deprovision_user($1, $2, $3, $4) AS r`, [userId, scope.orgId, scope.orgId ? null : scope.partnerId, reason])
      .then((row) => row?.r ?? null);
  }

  async setPartnerRole(partnerId: string, userId: string, roleId: string): Promise<number> {
    return (await (await this.db.repo(PartnerMembershipEntity)).update({ partnerId, userId, roleId: Not(roleId) }, { roleId })).affected ?? 0;
  }

  /** 1 when the role or the site restriction changed. */
  async setOrgRole(orgId: string, userId: string, roleId: string, siteRestricted: boolean): Promise<number> {
    const { affected } = await (await this.db.repo(OrganizationMembershipEntity)).update(
      [
        { orgId, userId, roleId: Not(roleId) },
        { orgId, userId, siteRestricted: Not(siteRestricted) },
      ],
      { roleId, siteRestricted },
    );
    return affected ?? 0;
  }

  async orgSites(orgId: string, userId: string): Promise<string[]> {
    const rows = await (await this.db.repo(OrganizationMembershipSiteEntity)).find({ select: { siteId: true }, where: { orgId, userId }, order: { siteId: 'ASC' } });
    return rows.map((r) => r.siteId);
  }

  async replaceOrgSites(orgId: string, userId: string, siteIds: string[]): Promise<void> {
    const sites = await this.db.repo(OrganizationMembershipSiteEntity);
    await sites.delete({ orgId, userId });
    if (siteIds.length) await sites.insert(siteIds.map((siteId) => ({ orgId, userId, siteId })));
  }
}
