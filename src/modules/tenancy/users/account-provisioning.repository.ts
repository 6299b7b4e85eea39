import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

/** Where a provisioned membership lives: an organization, or (orgId null) a partner. */
export interface MembershipScope {
  orgId: string | null;
  partnerId: string | null;
}

/** Accounts and memberships written by provisioning (SCIM, group-to-role mapping at sign-in). */
@Injectable()
export class AccountProvisioningRepository {
  constructor(private readonly db: Db) {}

  /** A new account, or null when the address is taken (by an account this tenant may not see). */
  async createUser(email: string, name: string): Promise<string | null> {
    const row = await this.db.one<{ id: string }>(`INSERT INTO users (email, name) VALUES ($1, $2) ON CONFLICT ((lower(email))) DO NOTHING RETURNING id`, [email, name]);
    return row?.id ?? null;
  }

  /** An active account without a password (its holder sets one through a reset link). */
  async createActiveUser(email: string, name: string): Promise<string> {
    const row = await this.db.one<{ id: string }>(`INSERT INTO users (email, name, status) VALUES ($1, $2, 'active') RETURNING id`, [email, name]);
    return row!.id;
  }

  async addPartnerMember(partnerId: string, userId: string, roleId: string): Promise<void> {
    await this.db.exec(`INSERT INTO partner_memberships (partner_id, user_id, role_id, org_access, site_restricted) VALUES ($1, $2, $3, 'all', false)`, [partnerId, userId, roleId]);
  }

  updateProfile(userId: string, email: string, name: string): Promise<number> {
    return this.db.exec(`UPDATE users SET email = $2, name = $3, updated_at = now() WHERE id = $1 AND (email IS DISTINCT FROM $2 OR name IS DISTINCT FROM $3)`, [userId, email, name]);
  }

  addOrgMember(orgId: string, userId: string, roleId: string): Promise<number> {
    return this.db.exec(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [orgId, userId, roleId]);
  }

  reactivate(scope: MembershipScope, userId: string): Promise<number> {
    return scope.orgId
      ? this.db.exec(`UPDATE organization_memberships SET suspended_at = NULL WHERE org_id = $1 AND user_id = $2 AND suspended_at IS NOT NULL`, [scope.orgId, userId])
      : this.db.exec(`UPDATE partner_memberships SET suspended_at = NULL WHERE partner_id = $1 AND user_id = $2 AND suspended_at IS NOT NULL`, [scope.partnerId, userId]);
  }

  suspend(scope: MembershipScope, userId: string): Promise<number> {
    return scope.orgId
      ? this.db.exec(`UPDATE organization_memberships SET suspended_at = coalesce(suspended_at, now()) WHERE org_id = $1 AND user_id = $2`, [scope.orgId, userId])
      : this.db.exec(`UPDATE partner_memberships SET suspended_at = coalesce(suspended_at, now()) WHERE partner_id = $1 AND user_id = $2`, [scope.partnerId, userId]);
  }

  setPartnerRole(partnerId: string, userId: string, roleId: string): Promise<number> {
    return this.db.exec(`UPDATE partner_memberships SET role_id = $3 WHERE partner_id = $1 AND user_id = $2 AND role_id <> $3`, [partnerId, userId, roleId]);
  }

  setOrgRole(orgId: string, userId: string, roleId: string, siteRestricted: boolean): Promise<number> {
    return this.db.exec(
      `UPDATE organization_memberships SET role_id = $3, site_restricted = $4
        WHERE org_id = $1 AND user_id = $2 AND (role_id <> $3 OR site_restricted <> $4)`,
      [orgId, userId, roleId, siteRestricted],
    );
  }

  async orgSites(orgId: string, userId: string): Promise<string[]> {
    const rows = await this.db.rows<{ site_id: string }>(`SELECT site_id FROM organization_membership_sites WHERE org_id = $1 AND user_id = $2 ORDER BY site_id`, [orgId, userId]);
    return rows.map((r) => r.site_id);
  }

  async replaceOrgSites(orgId: string, userId: string, siteIds: string[]): Promise<void> {
    await this.db.exec(`DELETE FROM organization_membership_sites WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
    if (siteIds.length) await this.db.exec(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) SELECT $1, $2, unnest($3::uuid[])`, [orgId, userId, siteIds]);
  }
}
