import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import { MembershipInvitationEntity } from './membership-invitation.entity';
import { OrganizationMembershipEntity } from './organization-membership.entity';
import { PartnerMembershipEntity } from './partner-membership.entity';

/** An invitation as its invitee lists it, with the names of the tenants that invited them. */
export type InvitationListItem = Pick<MembershipInvitationEntity, 'id' | 'orgId' | 'partnerId' | 'createdAt'> & {
  organizationName: string | null;
  partnerName: string | null;
};

/**
 * Invitations as their invitee sees and answers them. Everything here runs in system context,
 * for the invitee only (`user_id` is always the caller's): the organizations and partners that
 * invited them are not theirs to read, and acceptance writes memberships of those tenants.
 */
@Injectable()
export class InvitationRepository {
  constructor(private readonly db: DbService) {}

  /** SQL: it reads the names of organizations and partners, other modules' tables. */
  forUser(userId: string): Promise<InvitationListItem[]> {
    return this.db.rows<InvitationListItem>(
      `SELECT i.id, i.org_id AS "orgId", i.partner_id AS "partnerId", i.created_at AS "createdAt",
              o.name AS "organizationName", p.name AS "partnerName"
         FROM membership_invitations i
         LEFT JOIN organizations o ON o.id = i.org_id
         LEFT JOIN partners p ON p.id = i.partner_id
        WHERE i.user_id = $1
        ORDER BY i.created_at, i.id`,
      [userId],
    );
  }

  /** Locks the invitee's invitation until the transaction ends, so it is accepted once. */
  async lock(id: string, userId: string): Promise<MembershipInvitationEntity | null> {
    return (await this.db.repo(MembershipInvitationEntity)).findOne({ where: { id, userId }, lock: { mode: 'pessimistic_write' } });
  }

  async delete(id: string, userId: string): Promise<number> {
    return (await (await this.db.repo(MembershipInvitationEntity)).delete({ id, userId })).affected ?? 0;
  }

  /**
   * The organization membership an invitation grants, with the sites that still exist; nothing if
   * already a member. The sites are copied with SQL: one INSERT … SELECT keeps only those still there.
   */
  async acceptOrganization(i: MembershipInvitationEntity): Promise<void> {
    const memberships = await this.db.repo(OrganizationMembershipEntity);
    const { raw } = await memberships
      .createQueryBuilder()
      .insert()
      .values({ orgId: i.orgId as string, userId: i.userId, roleId: i.roleId, siteRestricted: i.siteIds !== null })
      .orIgnore()
      .returning('user_id')
      .execute();
    if ((raw as unknown[]).length === 1 && i.siteIds) {
      await this.db.exec(
        `INSERT INTO organization_membership_sites (org_id, user_id, site_id) SELECT $1, $2, s.id FROM sites s WHERE s.org_id = $1 AND s.id = ANY ($3::uuid[])`,
        [i.orgId, i.userId, i.siteIds],
      );
    }
  }

  async rolePermissions(roleId: string): Promise<string[] | null> {
    return (await this.db.one<{ permissions: string[] }>(`SELECT permissions FROM roles WHERE id = $1`, [roleId]))?.permissions ?? null;
  }

  /** The inviter reaches these organizations of the partner (null: every one, now and later) as a live technician. */
  async inviterReachesOrganizations(inviterId: string, partnerId: string, orgIds: string[] | null): Promise<boolean> {
    const row = await this.db.one<{ ok: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM app_actor_authority($1, NULL, $2) a WHERE a.org_ids IS NULL OR ($3::uuid[] IS NOT NULL AND $3::uuid[] <@ a.org_ids)) AS ok`,
      [inviterId, partnerId, orgIds],
    );
    return row?.ok === true;
  }

  async partnerOf(userId: string): Promise<string | null> {
    return (await (await this.db.repo(PartnerMembershipEntity)).findOne({ select: { partnerId: true }, where: { userId } }))?.partnerId ?? null;
  }

  /**
   * The technician membership an invitation grants, with the organizations and sites of the
   * partner that still exist (copied with SQL, as for an organization).
   */
  async acceptPartner(i: MembershipInvitationEntity): Promise<void> {
    await (await this.db.repo(PartnerMembershipEntity)).insert({
      partnerId: i.partnerId as string,
      userId: i.userId,
      roleId: i.roleId,
      orgAccess: i.orgAccess as 'all' | 'selected',
      siteRestricted: i.siteIds !== null,
    });
    if (i.orgIds) {
      await this.db.exec(
        `INSERT INTO partner_membership_orgs (partner_id, user_id, org_id) SELECT $1, $2, o.id FROM organizations o WHERE o.partner_id = $1 AND o.id = ANY ($3::uuid[])`,
        [i.partnerId, i.userId, i.orgIds],
      );
    }
    if (i.siteIds) {
      await this.db.exec(
        `INSERT INTO partner_membership_sites (partner_id, user_id, org_id, site_id)
         SELECT $1, $2, s.org_id, s.id FROM sites s JOIN organizations o ON o.id = s.org_id
          WHERE o.partner_id = $1 AND s.id = ANY ($3::uuid[]) AND ($4::uuid[] IS NULL OR s.org_id = ANY ($4::uuid[]))`,
        [i.partnerId, i.userId, i.siteIds, i.orgIds],
      );
    }
  }
}
