import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  status: string;
  mfa_enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface MembershipRow {
  user_id: string;
  org_id: string;
  role_id: string;
  /** null: not site-restricted. */
  site_ids: string[] | null;
  created_at: Date;
}

export interface PartnerMembershipRow {
  user_id: string;
  partner_id: string;
  role_id: string;
  org_access: 'all' | 'selected';
  org_ids: string[] | null;
  site_ids: string[] | null;
  created_at: Date;
}

// Never the password hash or TOTP secrets.
const USER_COLUMNS = `u.id, u.email, u.name, u.status, (u.totp_secret IS NOT NULL) AS mfa_enabled, u.created_at, u.updated_at`;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');

/**
 * Users are global identities; row-level security shows a user only once one of their
 * memberships is in the caller's reach, so a new user is inserted without RETURNING and read
 * back after its membership exists.
 */
@Injectable()
export class UserRepository {
  constructor(private readonly db: Db) {}

  async list(f: { orgId?: string; search?: string }, page: { limit: number; offset: number }): Promise<{ rows: UserRow[]; total: number }> {
    const where = `($1::uuid IS NULL OR EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = u.id AND m.org_id = $1))
      AND ($2::text IS NULL OR u.email ILIKE '%' || $2 || '%' OR u.name ILIKE '%' || $2 || '%')`;
    const params = [f.orgId ?? null, f.search === undefined ? null : likeEscape(f.search)];
    const [count] = await this.db.rows<{ total: string }>(`SELECT count(*) AS total FROM users u WHERE ${where}`, params);
    const rows = await this.db.rows<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE ${where} ORDER BY lower(u.email), u.id LIMIT $3 OFFSET $4`, [
      ...params,
      page.limit,
      page.offset,
    ]);
    return { rows, total: Number(count.total) };
  }

  find(id: string): Promise<UserRow | null> {
    return this.db.one<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [id]);
  }

  /** Memberships of these users in the given organizations. */
  memberships(userIds: readonly string[], orgIds: readonly string[]): Promise<MembershipRow[]> {
    return this.db.rows<MembershipRow>(
      `SELECT m.user_id, m.org_id, m.role_id, m.created_at,
              CASE WHEN m.site_restricted THEN array(
                SELECT s.site_id::text FROM organization_membership_sites s WHERE s.org_id = m.org_id AND s.user_id = m.user_id ORDER BY s.site_id) END AS site_ids
         FROM organization_memberships m
        WHERE m.user_id = ANY($1::uuid[]) AND m.org_id = ANY($2::uuid[])
        ORDER BY m.created_at, m.org_id`,
      [userIds, orgIds],
    );
  }

  async membership(orgId: string, userId: string): Promise<MembershipRow | null> {
    const [row] = await this.memberships([userId], [orgId]);
    return row ?? null;
  }

  partnerMemberships(userIds: readonly string[], partnerIds: readonly string[]): Promise<PartnerMembershipRow[]> {
    return this.db.rows<PartnerMembershipRow>(
      `SELECT pm.user_id, pm.partner_id, pm.role_id, pm.org_access, pm.created_at,
              CASE WHEN pm.org_access = 'selected' THEN array(
                SELECT o.org_id::text FROM partner_membership_orgs o WHERE o.partner_id = pm.partner_id AND o.user_id = pm.user_id ORDER BY o.org_id) END AS org_ids,
              CASE WHEN pm.site_restricted THEN array(
                SELECT s.site_id::text FROM partner_membership_sites s WHERE s.partner_id = pm.partner_id AND s.user_id = pm.user_id ORDER BY s.site_id) END AS site_ids
         FROM partner_memberships pm
        WHERE pm.user_id = ANY($1::uuid[]) AND pm.partner_id = ANY($2::uuid[])`,
      [userIds, partnerIds],
    );
  }

  /** No RETURNING: the row is not visible to the caller until a membership of theirs exists. */
  insertUser(u: { id: string; email: string; name: string; passwordHash: string | null }): Promise<number> {
    return this.db.exec(`INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)`, [u.id, u.email, u.name, u.passwordHash]);
  }

  async insertMembership(m: { orgId: string; userId: string; roleId: string; siteIds: readonly string[] | null }): Promise<void> {
    await this.db.exec(`INSERT INTO organization_memberships (org_id, user_id, role_id, site_restricted) VALUES ($1, $2, $3, $4)`, [
      m.orgId,
      m.userId,
      m.roleId,
      m.siteIds !== null,
    ]);
    await this.replaceMembershipSites(m.orgId, m.userId, m.siteIds);
  }

  /** `siteIds` undefined: unchanged; null: every site; a list: only those. */
  async updateMembership(orgId: string, userId: string, patch: { roleId?: string; siteIds?: readonly string[] | null }): Promise<void> {
    await this.db.exec(
      `UPDATE organization_memberships SET role_id = coalesce($3, role_id), site_restricted = CASE WHEN $4 THEN $5 ELSE site_restricted END
        WHERE org_id = $1 AND user_id = $2`,
      [orgId, userId, patch.roleId ?? null, patch.siteIds !== undefined, patch.siteIds !== null && patch.siteIds !== undefined],
    );
    if (patch.siteIds !== undefined) await this.replaceMembershipSites(orgId, userId, patch.siteIds);
  }

  deleteMembership(orgId: string, userId: string): Promise<number> {
    return this.db.exec(`DELETE FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
  }

  async insertPartnerMembership(m: {
    partnerId: string;
    userId: string;
    roleId: string;
    orgAccess: 'all' | 'selected';
    orgIds: readonly string[];
    sites: readonly { orgId: string; siteId: string }[] | null;
  }): Promise<void> {
    await this.db.exec(`INSERT INTO partner_memberships (partner_id, user_id, role_id, org_access, site_restricted) VALUES ($1, $2, $3, $4, $5)`, [
      m.partnerId,
      m.userId,
      m.roleId,
      m.orgAccess,
      m.sites !== null,
    ]);
    if (m.orgIds.length) {
      await this.db.exec(`INSERT INTO partner_membership_orgs (partner_id, user_id, org_id) SELECT $1, $2, unnest($3::uuid[])`, [m.partnerId, m.userId, m.orgIds]);
    }
    if (m.sites?.length) {
      await this.db.exec(
        `INSERT INTO partner_membership_sites (partner_id, user_id, org_id, site_id) SELECT $1, $2, unnest($3::uuid[]), unnest($4::uuid[])`,
        [m.partnerId, m.userId, m.sites.map((s) => s.orgId), m.sites.map((s) => s.siteId)],
      );
    }
  }

  private async replaceMembershipSites(orgId: string, userId: string, siteIds: readonly string[] | null): Promise<void> {
    await this.db.exec(`DELETE FROM organization_membership_sites WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
    if (siteIds?.length) {
      await this.db.exec(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) SELECT $1, $2, unnest($3::uuid[])`, [orgId, userId, siteIds]);
    }
  }
}
