import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Security review (issue 13), items 10b and the PAM separation of duties:
 *
 *  - membership_invitations: adding a user by the email of an identity the caller's tenant cannot
 *    see (a user of another tenant) no longer answers 409 `email_taken`; it records an invitation
 *    instead, which changes nothing about that identity (no membership, no access, no SSO or
 *    approval role) until the person accepts it, signed in as themselves. The inviting tenant sees
 *    only what it wrote (the email and name it typed), so the answer is the same as for a new
 *    email. One row per invitation: an organization membership (org_id) or a partner membership
 *    (partner_id, with org_access and org_ids); `site_ids` null means every site (ids of sites or
 *    organizations deleted since are ignored on reading and on acceptance, as the membership tables
 *    drop them by cascade). The inviting tenant reads and writes its rows; the invitee reads (and
 *    declines) their own; acceptance runs in system context.
 *
 *  - elevation_requests_no_self_approval: a just-in-time request is never approved by its own
 *    subject, whatever code writes the row (the compare-and-swap of respond says the same). An API
 *    key acts for its creator, so `approved_by` is always a person.
 */
export class InvitationsAndSelfApproval1763700720000 implements MigrationInterface {
  name = 'InvitationsAndSelfApproval1763700720000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE membership_invitations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        role_id uuid NOT NULL,
        org_access varchar(16) CHECK (org_access IN ('all', 'selected')),
        org_ids uuid[] CHECK (cardinality(org_ids) BETWEEN 1 AND 1000),
        site_ids uuid[] CHECK (cardinality(site_ids) BETWEEN 1 AND 1000),
        email varchar(255) NOT NULL CHECK (length(email) >= 3),
        name varchar(255) NOT NULL,
        invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT membership_invitations_kind_check CHECK (
          (org_id IS NOT NULL AND partner_id IS NULL AND org_access IS NULL AND org_ids IS NULL)
          OR (partner_id IS NOT NULL AND org_id IS NULL AND org_access IS NOT NULL
              AND (org_access = 'selected') = (org_ids IS NOT NULL))),
        UNIQUE (org_id, user_id),
        UNIQUE (partner_id, user_id),
        -- Like memberships, without cascade: a role an invitation grants is in use.
        FOREIGN KEY (org_id, role_id) REFERENCES roles(org_id, id),
        FOREIGN KEY (partner_id, role_id) REFERENCES roles(partner_id, id)
      );
      CREATE INDEX membership_invitations_user_idx ON membership_invitations (user_id);
      CREATE INDEX membership_invitations_email_idx ON membership_invitations (lower(email));
      ALTER TABLE membership_invitations ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON membership_invitations
        USING (app_has_owner_access(org_id, partner_id) OR user_id = app_current_user_id())
        WITH CHECK (app_has_owner_access(org_id, partner_id));
      GRANT SELECT, INSERT, UPDATE, DELETE ON membership_invitations TO app_user;

      ALTER TABLE elevation_requests ADD CONSTRAINT elevation_requests_no_self_approval
        CHECK (flow_type <> 'tech_jit_admin' OR approved_by IS NULL OR approved_by IS DISTINCT FROM subject_user_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE elevation_requests DROP CONSTRAINT elevation_requests_no_self_approval;
      DROP TABLE membership_invitations;
    `);
  }
}
