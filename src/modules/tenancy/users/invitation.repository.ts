import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface InvitationRow {
  id: string;
  user_id: string;
  org_id: string | null;
  partner_id: string | null;
  role_id: string;
  org_access: 'all' | 'selected' | null;
  org_ids: string[] | null;
  site_ids: string[] | null;
  created_at: Date;
}

export interface InvitationListRow extends InvitationRow {
  organization_name: string | null;
  partner_name: string | null;
}

/**
 * Invitations as their invitee sees and answers them. Everything here runs in system context,
 * for the invitee only (`user_id` is always the caller's): the organizations and partners that
 * invited them are not theirs to read, and acceptance writes memberships of those tenants.
 */
@Injectable()
export class InvitationRepository {
  constructor(private readonly db: Db) {}

  forUser(userId: string): Promise<InvitationListRow[]> {
    return this.db.rows<InvitationListRow>(
      `SELECT i.*, o.name AS organization_name, p.name AS partner_name
         FROM membership_invitations i
         LEFT JOIN organizations o ON o.id = i.org_id
         LEFT JOIN partners p ON p.id = i.partner_id
        WHERE i.user_id = $1
        ORDER BY i.created_at, i.id`,
      [userId],
    );
  }

  /** Locks the invitee's invitation until the transaction ends, so it is accepted once. */
  lock(id: string, userId: string): Promise<InvitationRow | null> {
    return this.db.one<InvitationRow>(`SELECT * FROM membership_invitations WHERE id = $1 AND user_id = $2 FOR UPDATE`, [id, userId]);
  }

  delete(id: string, userId: string): Promise<number> {
    return this.db.exec(`DELETE FROM membership_invitations WHERE id = $1 AND user_id = $2`, [id, userId]);
  }

  /** The organization membership an invitation grants, with the sites that still exist; nothing if already a member. */
  async acceptOrganization(i: InvitationRow): Promise<void> {
    const inserted = await this.db.exec(
      `INSERT INTO organization_memberships (org_id, user_id, role_id, site_restricted) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
      [i.org_id, i.user_id, i.role_id, i.site_ids !== null],
    );
    if (inserted === 1 && i.site_ids) {
      await this.db.exec(
        `INSERT INTO organization_membership_sites (org_id, user_id, site_id) SELECT $1, $2, s.id FROM sites s WHERE s.org_id = $1 AND s.id = ANY ($3::uuid[])`,
        [i.org_id, i.user_id, i.site_ids],
      );
    }
  }

  partnerOf(userId: string): Promise<{ partner_id: string } | null> {
    return this.db.one<{ partner_id: string }>(`SELECT partner_id FROM partner_memberships WHERE user_id = $1`, [userId]);
  }

  /** The technician membership an invitation grants, with the organizations and sites of the partner that still exist. */
  async acceptPartner(i: InvitationRow): Promise<void> {
    await this.db.exec(`INSERT INTO partner_memberships (partner_id, user_id, role_id, org_access, site_restricted) VALUES ($1, $2, $3, $4, $5)`, [
      i.partner_id,
      i.user_id,
      i.role_id,
      i.org_access,
      i.site_ids !== null,
    ]);
    if (i.org_ids) {
      await this.db.exec(
        `INSERT INTO partner_membership_orgs (partner_id, user_id, org_id) SELECT $1, $2, o.id FROM organizations o WHERE o.partner_id = $1 AND o.id = ANY ($3::uuid[])`,
        [i.partner_id, i.user_id, i.org_ids],
      );
    }
    if (i.site_ids) {
      await this.db.exec(
        `INSERT INTO partner_membership_sites (partner_id, user_id, org_id, site_id)
         SELECT $1, $2, s.org_id, s.id FROM sites s JOIN organizations o ON o.id = s.org_id
          WHERE o.partner_id = $1 AND s.id = ANY ($3::uuid[]) AND ($4::uuid[] IS NULL OR s.org_id = ANY ($4::uuid[]))`,
        [i.partner_id, i.user_id, i.site_ids, i.org_ids],
      );
    }
  }
}
