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
  /** An invitation the person has not accepted yet (membership_invitations), shown to the inviting tenant as a membership. */
  pending: boolean;
}

export interface PartnerMembershipRow {
  user_id: string;
  partner_id: string;
  role_id: string;
  org_access: 'all' | 'selected';
  org_ids: string[] | null;
  site_ids: string[] | null;
  created_at: Date;
  pending: boolean;
}

export interface OrgInvitation {
  orgId: string;
  userId: string;
  roleId: string;
  siteIds: readonly string[] | null;
  email: string;
  name: string;
  invitedBy: string | null;
}

export interface PartnerInvitation {
  partnerId: string;
  userId: string;
  roleId: string;
  orgAccess: 'all' | 'selected';
  orgIds: readonly string[];
  siteIds: readonly string[] | null;
  email: string;
  name: string;
  invitedBy: string | null;
}

// Never the password hash or TOTP secrets.
const USER_COLUMNS = `u.id, u.email, u.name, u.status, (u.totp_secret IS NOT NULL) AS mfa_enabled, u.created_at, u.updated_at`;

/**
 * The users the caller sees: the identities row-level security shows (members of its
 * organizations or partner, and itself), and, for an identity it invited but that has not
 * accepted, only what the caller wrote (the invitation's email and name) with the values of a new
 * account, so an invited identity of another tenant reads exactly like a user just created. An
 * identity visible both ways is shown as itself.
 */
const VISIBLE_USERS = `(
  SELECT DISTINCT ON (x.id) x.id, x.email, x.name, x.status, x.mfa_enabled, x.created_at, x.updated_at
    FROM (SELECT ${USER_COLUMNS}, 0 AS shown_as FROM users u
          UNION ALL
          SELECT i.user_id, i.email, i.name, 'active', false, i.created_at, i.created_at, 1 FROM membership_invitations i) x
   ORDER BY x.id, x.shown_as, x.created_at)`;

/** Site ids of an invitation that still exist, as the membership tables keep them (text, ordered); null: every site. */
const INVITED_SITES = `CASE WHEN i.site_ids IS NOT NULL THEN array(
  SELECT s.id::text FROM sites s WHERE s.id = ANY (i.site_ids) AND (i.org_id IS NULL OR s.org_id = i.org_id) ORDER BY s.id) END`;

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
    const where = `($1::uuid IS NULL OR EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = u.id AND m.org_id = $1)
                     OR EXISTS (SELECT 1 FROM membership_invitations i WHERE i.user_id = u.id AND i.org_id = $1))
      AND ($2::text IS NULL OR u.email ILIKE '%' || $2 || '%' OR u.name ILIKE '%' || $2 || '%')`;
    const params = [f.orgId ?? null, f.search === undefined ? null : likeEscape(f.search)];
    const [count] = await this.db.rows<{ total: string }>(`SELECT count(*) AS total FROM ${VISIBLE_USERS} u WHERE ${where}`, params);
    const rows = await this.db.rows<UserRow>(`SELECT u.* FROM ${VISIBLE_USERS} u WHERE ${where} ORDER BY lower(u.email), u.id LIMIT $3 OFFSET $4`, [
      ...params,
      page.limit,
      page.offset,
    ]);
    return { rows, total: Number(count.total) };
  }

  /** A user as the caller sees it (see VISIBLE_USERS): an invited identity as the caller wrote it. */
  find(id: string): Promise<UserRow | null> {
    return this.db.one<UserRow>(`SELECT u.* FROM ${VISIBLE_USERS} u WHERE u.id = $1`, [id]);
  }

  /** Whether the identity itself is visible to the caller (a member of its tenant, or itself), not only an invitation. */
  async isVisibleIdentity(id: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM users WHERE id = $1`, [id])) !== null;
  }

  /** Whether the caller already sees a user, or an invitation, with this email (case-insensitive). */
  async emailVisible(email: string): Promise<boolean> {
    const row = await this.db.one(
      `SELECT 1 WHERE EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($1))
                  OR EXISTS (SELECT 1 FROM membership_invitations i WHERE lower(i.email) = lower($1) AND app_has_owner_access(i.org_id, i.partner_id))`,
      [email],
    );
    return row !== null;
  }

  /** The identity holding this email, whoever can see it. Run in system context only. */
  async idByEmail(email: string): Promise<string | null> {
    return (await this.db.one<{ id: string }>(`SELECT id FROM users WHERE lower(email) = lower($1)`, [email]))?.id ?? null;
  }

  /** Memberships of these users in the given organizations, and the invitations to them the caller sees. */
  memberships(userIds: readonly string[], orgIds: readonly string[]): Promise<MembershipRow[]> {
    return this.db.rows<MembershipRow>(
      `SELECT m.user_id, m.org_id, m.role_id, m.created_at,
              CASE WHEN m.site_restricted THEN array(
                SELECT s.site_id::text FROM organization_membership_sites s WHERE s.org_id = m.org_id AND s.user_id = m.user_id ORDER BY s.site_id) END AS site_ids,
              false AS pending
         FROM organization_memberships m
        WHERE m.user_id = ANY($1::uuid[]) AND m.org_id = ANY($2::uuid[])
       UNION ALL
       SELECT i.user_id, i.org_id, i.role_id, i.created_at, ${INVITED_SITES} AS site_ids, true AS pending
         FROM membership_invitations i
        WHERE i.org_id IS NOT NULL AND i.user_id = ANY($1::uuid[]) AND i.org_id = ANY($2::uuid[])
          AND app_has_org_access(i.org_id)
          AND NOT EXISTS (SELECT 1 FROM organization_memberships m WHERE m.org_id = i.org_id AND m.user_id = i.user_id)
        ORDER BY created_at, org_id`,
      [userIds, orgIds],
    );
  }

  async membership(orgId: string, userId: string): Promise<MembershipRow | null> {
    const [row] = await this.memberships([userId], [orgId]);
    return row ?? null;
  }

  /** Partner memberships of these users in the given partners, and the invitations to them the caller sees. */
  partnerMemberships(userIds: readonly string[], partnerIds: readonly string[]): Promise<PartnerMembershipRow[]> {
    return this.db.rows<PartnerMembershipRow>(
      `SELECT pm.user_id, pm.partner_id, pm.role_id, pm.org_access, pm.created_at,
              CASE WHEN pm.org_access = 'selected' THEN array(
                SELECT o.org_id::text FROM partner_membership_orgs o WHERE o.partner_id = pm.partner_id AND o.user_id = pm.user_id ORDER BY o.org_id) END AS org_ids,
              CASE WHEN pm.site_restricted THEN array(
                SELECT s.site_id::text FROM partner_membership_sites s WHERE s.partner_id = pm.partner_id AND s.user_id = pm.user_id ORDER BY s.site_id) END AS site_ids,
              false AS pending
         FROM partner_memberships pm
        WHERE pm.user_id = ANY($1::uuid[]) AND pm.partner_id = ANY($2::uuid[])
       UNION ALL
       SELECT i.user_id, i.partner_id, i.role_id, i.org_access, i.created_at,
              CASE WHEN i.org_access = 'selected' THEN array(
                SELECT o.id::text FROM organizations o WHERE o.id = ANY (i.org_ids) AND o.partner_id = i.partner_id ORDER BY o.id) END AS org_ids,
              ${INVITED_SITES} AS site_ids, true AS pending
         FROM membership_invitations i
        WHERE i.partner_id IS NOT NULL AND i.user_id = ANY($1::uuid[]) AND i.partner_id = ANY($2::uuid[])
          AND app_has_partner_access(i.partner_id)
          AND NOT EXISTS (SELECT 1 FROM partner_memberships pm WHERE pm.partner_id = i.partner_id AND pm.user_id = i.user_id)`,
      [userIds, partnerIds],
    );
  }

  /**
   * Inserts the user unless the email is taken (by anyone, seen or not): 1 when inserted, 0 when
   * taken. No RETURNING: the row is not visible to the caller until a membership of theirs exists.
   */
  insertUserIfNew(u: { id: string; email: string; name: string; passwordHash: string | null }): Promise<number> {
    return this.db.exec(`INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [
      u.id,
      u.email,
      u.name,
      u.passwordHash,
    ]);
  }

  /** The partner a user is a technician of, if any. Run in system context only. */
  async partnerOf(userId: string): Promise<string | null> {
    return (await this.db.one<{ partner_id: string }>(`SELECT partner_id FROM partner_memberships WHERE user_id = $1`, [userId]))?.partner_id ?? null;
  }

  async insertOrgInvitation(i: OrgInvitation): Promise<void> {
    await this.db.exec(
      `INSERT INTO membership_invitations (org_id, user_id, role_id, site_ids, email, name, invited_by) VALUES ($1, $2, $3, $4::uuid[], $5, $6, $7)`,
      [i.orgId, i.userId, i.roleId, i.siteIds, i.email, i.name, i.invitedBy],
    );
  }

  async insertPartnerInvitation(i: PartnerInvitation): Promise<void> {
    await this.db.exec(
      `INSERT INTO membership_invitations (partner_id, user_id, role_id, org_access, org_ids, site_ids, email, name, invited_by)
       VALUES ($1, $2, $3, $4, $5::uuid[], $6::uuid[], $7, $8, $9)`,
      [i.partnerId, i.userId, i.roleId, i.orgAccess, i.orgAccess === 'selected' ? i.orgIds : null, i.siteIds, i.email, i.name, i.invitedBy],
    );
  }

  /** `siteIds` undefined: unchanged; null: every site; a list: only those. */
  updateOrgInvitation(orgId: string, userId: string, patch: { roleId?: string; siteIds?: readonly string[] | null }): Promise<number> {
    return this.db.exec(
      `UPDATE membership_invitations SET role_id = coalesce($3, role_id), site_ids = CASE WHEN $4 THEN $5::uuid[] ELSE site_ids END
        WHERE org_id = $1 AND user_id = $2`,
      [orgId, userId, patch.roleId ?? null, patch.siteIds !== undefined, patch.siteIds ?? null],
    );
  }

  deleteOrgInvitation(orgId: string, userId: string): Promise<number> {
    return this.db.exec(`DELETE FROM membership_invitations WHERE org_id = $1 AND user_id = $2`, [orgId, userId]);
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
