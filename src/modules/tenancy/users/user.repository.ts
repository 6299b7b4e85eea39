import { Injectable } from '@nestjs/common';
import { Raw } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { MembershipInvitationEntity } from './membership-invitation.entity';
import { OrganizationMembershipEntity, OrganizationMembershipSiteEntity } from './organization-membership.entity';
import { PartnerMembershipEntity, PartnerMembershipOrgEntity, PartnerMembershipSiteEntity } from './partner-membership.entity';
import { UserEntity } from './user.entity';

/** A user as the caller sees it (VISIBLE_USERS): the entity's public columns, and whether MFA is on. */
export type VisibleUser = Pick<UserEntity, 'id' | 'email' | 'name' | 'status' | 'createdAt' | 'updatedAt'> & { mfaEnabled: boolean };

/** An organization membership as the caller sees it, with its sites, or an invitation to one (`pending`). */
export type MembershipView = Pick<OrganizationMembershipEntity, 'userId' | 'orgId' | 'roleId' | 'createdAt'> & {
  /** null: not site-restricted. */
  siteIds: string[] | null;
  /** An invitation the person has not accepted yet (membership_invitations), shown to the inviting tenant as a membership. */
  pending: boolean;
};

/** A partner membership as the caller sees it, with its organizations and sites, or an invitation to one (`pending`). */
export type PartnerMembershipView = Pick<PartnerMembershipEntity, 'userId' | 'partnerId' | 'roleId' | 'orgAccess' | 'createdAt'> & {
  /** null: every organization (orgAccess all). */
  orgIds: string[] | null;
  /** null: not site-restricted. */
  siteIds: string[] | null;
  pending: boolean;
};

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
 *
 * Stays SQL: a union of users and invitations, one row per identity (DISTINCT ON), which
 * find-options cannot express; the list pages it ordered by lower(email).
 */
const VISIBLE_USERS = `(
  SELECT DISTINCT ON (x.id) x.id, x.email, x.name, x.status, x.mfa_enabled AS "mfaEnabled", x.created_at AS "createdAt", x.updated_at AS "updatedAt"
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
 * back after its membership exists. Memberships and invitations are written through their
 * entities on the request's transaction (DbService.repo); the reads that show invitations as users and
 * memberships stay SQL.
 */
@Injectable()
export class UserRepository {
  constructor(private readonly db: DbService) {}

  async list(f: { orgId?: string; search?: string }, page: { limit: number; offset: number }): Promise<{ rows: VisibleUser[]; total: number }> {
    const where = `($1::uuid IS NULL OR EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = u.id AND m.org_id = $1)
                     OR EXISTS (SELECT 1 FROM membership_invitations i WHERE i.user_id = u.id AND i.org_id = $1))
      AND ($2::text IS NULL OR u.email ILIKE '%' || $2 || '%' OR u.name ILIKE '%' || $2 || '%')`;
    const params = [f.orgId ?? null, f.search === undefined ? null : likeEscape(f.search)];
    const [count] = await this.db.rows<{ total: string }>(`SELECT count(*) AS total FROM ${VISIBLE_USERS} u WHERE ${where}`, params);
    const rows = await this.db.rows<VisibleUser>(`SELECT u.* FROM ${VISIBLE_USERS} u WHERE ${where} ORDER BY lower(u.email), u.id LIMIT $3 OFFSET $4`, [
      ...params,
      page.limit,
      page.offset,
    ]);
    return { rows, total: Number(count.total) };
  }

  /** A user as the caller sees it (see VISIBLE_USERS): an invited identity as the caller wrote it. */
  find(id: string): Promise<VisibleUser | null> {
    return this.db.one<VisibleUser>(`SELECT u.* FROM ${VISIBLE_USERS} u WHERE u.id = $1`, [id]);
  }

  /** Whether the identity itself is visible to the caller (a member of its tenant, or itself), not only an invitation. */
  async isVisibleIdentity(id: string): Promise<boolean> {
    return (await this.db.repo(UserEntity)).existsBy({ id });
  }

  /** Whether the caller already sees a user, or an invitation, with this email (case-insensitive). SQL: one statement over both tables. */
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
    const user = await (await this.db.repo(UserEntity)).findOne({ select: { id: true }, where: { email: Raw((column) => `lower(${column}) = lower(:email)`, { email }) } });
    return user?.id ?? null;
  }

  /**
   * Memberships of these users in the given organizations, and the invitations to them the caller
   * sees. SQL: a union of memberships and invitations, with each one's sites as an array. The order is
   * total: a user has at most one of either per organization, and rows written in one transaction
   * share their creation time.
   */
  memberships(userIds: readonly string[], orgIds: readonly string[]): Promise<MembershipView[]> {
    return this.db.rows<MembershipView>(
      `SELECT m.user_id AS "userId", m.org_id AS "orgId", m.role_id AS "roleId", m.created_at AS "createdAt",
              CASE WHEN m.site_restricted THEN array(
                SELECT s.site_id::text FROM organization_membership_sites s WHERE s.org_id = m.org_id AND s.user_id = m.user_id ORDER BY s.site_id) END AS "siteIds",
              false AS pending
         FROM organization_memberships m
        WHERE m.user_id = ANY($1::uuid[]) AND m.org_id = ANY($2::uuid[])
       UNION ALL
       SELECT i.user_id, i.org_id, i.role_id, i.created_at, ${INVITED_SITES} AS site_ids, true AS pending
         FROM membership_invitations i
        WHERE i.org_id IS NOT NULL AND i.user_id = ANY($1::uuid[]) AND i.org_id = ANY($2::uuid[])
          AND app_has_org_access(i.org_id)
          AND NOT EXISTS (SELECT 1 FROM organization_memberships m WHERE m.org_id = i.org_id AND m.user_id = i.user_id)
        ORDER BY "createdAt", "orgId", "userId"`,
      [userIds, orgIds],
    );
  }

  async membership(orgId: string, userId: string): Promise<MembershipView | null> {
    const [row] = await this.memberships([userId], [orgId]);
    return row ?? null;
  }

  /** Partner memberships of these users in the given partners, and the invitations to them the caller sees. SQL, as `memberships`. */
  partnerMemberships(userIds: readonly string[], partnerIds: readonly string[]): Promise<PartnerMembershipView[]> {
    return this.db.rows<PartnerMembershipView>(
      `SELECT pm.user_id AS "userId", pm.partner_id AS "partnerId", pm.role_id AS "roleId", pm.org_access AS "orgAccess", pm.created_at AS "createdAt",
              CASE WHEN pm.org_access = 'selected' THEN array(
                SELECT o.org_id::text FROM partner_membership_orgs o WHERE o.partner_id = pm.partner_id AND o.user_id = pm.user_id ORDER BY o.org_id) END AS "orgIds",
              CASE WHEN pm.site_restricted THEN array(
                SELECT s.site_id::text FROM partner_membership_sites s WHERE s.partner_id = pm.partner_id AND s.user_id = pm.user_id ORDER BY s.site_id) END AS "siteIds",
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
   * SQL, not the entity: TypeORM's insert answers no row count, and only RETURNING would tell.
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
    return (await (await this.db.repo(PartnerMembershipEntity)).findOne({ select: { partnerId: true }, where: { userId } }))?.partnerId ?? null;
  }

  async insertOrgInvitation(i: OrgInvitation): Promise<void> {
    await (await this.db.repo(MembershipInvitationEntity)).insert({
      orgId: i.orgId,
      userId: i.userId,
      roleId: i.roleId,
      siteIds: i.siteIds ? [...i.siteIds] : null,
      email: i.email,
      name: i.name,
      invitedBy: i.invitedBy,
    });
  }

  async insertPartnerInvitation(i: PartnerInvitation): Promise<void> {
    await (await this.db.repo(MembershipInvitationEntity)).insert({
      partnerId: i.partnerId,
      userId: i.userId,
      roleId: i.roleId,
      orgAccess: i.orgAccess,
      orgIds: i.orgAccess === 'selected' ? [...i.orgIds] : null,
      siteIds: i.siteIds ? [...i.siteIds] : null,
      email: i.email,
      name: i.name,
      invitedBy: i.invitedBy,
    });
  }

  /** `siteIds` undefined: unchanged; null: every site; a list: only those. 1 when the caller sees the invitation. */
  async updateOrgInvitation(orgId: string, userId: string, patch: { roleId?: string; siteIds?: readonly string[] | null }): Promise<number> {
    const invitations = await this.db.repo(MembershipInvitationEntity);
    const set: Partial<Pick<MembershipInvitationEntity, 'roleId' | 'siteIds'>> = {};
    if (patch.roleId !== undefined) set.roleId = patch.roleId;
    if (patch.siteIds !== undefined) set.siteIds = patch.siteIds ? [...patch.siteIds] : null;
    if (!Object.keys(set).length) return invitations.countBy({ orgId, userId });
    return (await invitations.update({ orgId, userId }, set)).affected ?? 0;
  }

  async deleteOrgInvitation(orgId: string, userId: string): Promise<number> {
    return (await (await this.db.repo(MembershipInvitationEntity)).delete({ orgId, userId })).affected ?? 0;
  }

  async insertMembership(m: { orgId: string; userId: string; roleId: string; siteIds: readonly string[] | null }): Promise<void> {
    await (await this.db.repo(OrganizationMembershipEntity)).insert({ orgId: m.orgId, userId: m.userId, roleId: m.roleId, siteRestricted: m.siteIds !== null });
    await this.replaceMembershipSites(m.orgId, m.userId, m.siteIds);
  }

  /** `siteIds` undefined: unchanged; null: every site; a list: only those. */
  async updateMembership(orgId: string, userId: string, patch: { roleId?: string; siteIds?: readonly string[] | null }): Promise<void> {
    const set: Partial<Pick<OrganizationMembershipEntity, 'roleId' | 'siteRestricted'>> = {};
    if (patch.roleId !== undefined) set.roleId = patch.roleId;
    if (patch.siteIds !== undefined) set.siteRestricted = patch.siteIds !== null;
    if (Object.keys(set).length) await (await this.db.repo(OrganizationMembershipEntity)).update({ orgId, userId }, set);
    if (patch.siteIds !== undefined) await this.replaceMembershipSites(orgId, userId, patch.siteIds);
  }

  async deleteMembership(orgId: string, userId: string): Promise<number> {
    return (await (await this.db.repo(OrganizationMembershipEntity)).delete({ orgId, userId })).affected ?? 0;
  }

  async insertPartnerMembership(m: {
    partnerId: string;
    userId: string;
    roleId: string;
    orgAccess: 'all' | 'selected';
    orgIds: readonly string[];
    sites: readonly { orgId: string; siteId: string }[] | null;
  }): Promise<void> {
    const { partnerId, userId } = m;
    await (await this.db.repo(PartnerMembershipEntity)).insert({ partnerId, userId, roleId: m.roleId, orgAccess: m.orgAccess, siteRestricted: m.sites !== null });
    if (m.orgIds.length) await (await this.db.repo(PartnerMembershipOrgEntity)).insert(m.orgIds.map((orgId) => ({ partnerId, userId, orgId })));
    if (m.sites?.length) await (await this.db.repo(PartnerMembershipSiteEntity)).insert(m.sites.map((s) => ({ partnerId, userId, orgId: s.orgId, siteId: s.siteId })));
  }

  private async replaceMembershipSites(orgId: string, userId: string, siteIds: readonly string[] | null): Promise<void> {
    const sites = await this.db.repo(OrganizationMembershipSiteEntity);
    await sites.delete({ orgId, userId });
    if (siteIds?.length) await sites.insert(siteIds.map((siteId) => ({ orgId, userId, siteId })));
  }
}
