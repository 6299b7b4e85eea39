import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The approval fan-out (app_pam_approval_fan_out, migration 1763700800000) asks no technician
 * through a suspended membership (issue 16: a membership SCIM deprovisioned keeps its role but
 * grants nothing). Such a person cannot authenticate to answer, so asking them only delays the
 * request and pushes a prompt to the phone of someone who has left. A person with another,
 * live, membership that grants the right is still asked through that one.
 */
export function fanOut(skipSuspended: boolean, requestByPrimaryKey = false): string {
  const live = (alias: string) => (skipSuspended ? ` AND ${alias}.suspended_at IS NULL` : '');
  // Migration 1763701600000: the request by its primary key alone, its other conditions checked
  // on the one row (OFFSET 0 keeps them out of the scan; see there why).
  const request = requestByPrimaryKey ? '(SELECT * FROM elevation_requests WHERE id = p_request OFFSET 0) e' : 'elevation_requests e';
  return `
      CREATE OR REPLACE FUNCTION app_pam_approval_fan_out(p_org uuid, p_request uuid, p_ttl_minutes integer)
        RETURNS TABLE (approvals bigint, pushes bigint)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        WITH req AS (
               SELECT e.id, e.org_id, e.site_id, e.flow_type, e.subject_user_id, e.requested_at, o.partner_id
                 FROM ${request} JOIN organizations o ON o.id = e.org_id
                WHERE e.org_id = p_org AND e.id = p_request AND e.status = 'pending'
             ), grants AS (
               SELECT m.user_id, r.permissions,
                      (NOT m.site_restricted OR EXISTS (SELECT 1 FROM organization_membership_sites ms
                         WHERE ms.org_id = m.org_id AND ms.user_id = m.user_id AND ms.site_id = req.site_id)) AS site_ok
                 FROM req JOIN organization_memberships m ON m.org_id = req.org_id${live('m')} JOIN roles r ON r.id = m.role_id
               UNION ALL
               SELECT pm.user_id, r.permissions,
                      (NOT pm.site_restricted OR EXISTS (SELECT 1 FROM partner_membership_sites ps
                         WHERE ps.partner_id = pm.partner_id AND ps.user_id = pm.user_id AND ps.site_id = req.site_id)) AS site_ok
                 FROM req JOIN partner_memberships pm ON pm.partner_id = req.partner_id${live('pm')} JOIN roles r ON r.id = pm.role_id
                WHERE pm.org_access = 'all' OR EXISTS (SELECT 1 FROM partner_membership_orgs po
                        WHERE po.partner_id = pm.partner_id AND po.user_id = pm.user_id AND po.org_id = req.org_id)
             ), eligible AS (
               SELECT DISTINCT g.user_id FROM grants g
                 JOIN users u ON u.id = g.user_id AND u.status = 'active'
                WHERE g.site_ok AND g.permissions && ARRAY['*', 'devices:*', 'devices:execute']::text[]
                  AND NOT EXISTS (SELECT 1 FROM req WHERE req.subject_user_id = g.user_id)
                  AND EXISTS (SELECT 1 FROM mobile_devices md WHERE md.user_id = g.user_id)
             ), approval_rows AS (
               INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, expires_at)
               SELECT req.org_id, req.id, eligible.user_id, req.requested_at + make_interval(mins => p_ttl_minutes) FROM req CROSS JOIN eligible
               ON CONFLICT (org_id, elevation_request_id, approver_user_id) DO NOTHING
               RETURNING pam_approval_requests.id, pam_approval_requests.org_id, pam_approval_requests.approver_user_id
             ), push_rows AS (
               INSERT INTO push_outbox (org_id, approval_request_id, mobile_device_id)
               SELECT a.org_id, a.id, md.id FROM approval_rows a JOIN mobile_devices md ON md.user_id = a.approver_user_id
               RETURNING push_outbox.id
             )
        SELECT (SELECT count(*) FROM approval_rows), (SELECT count(*) FROM push_rows);
      END
      $f$;`;
}

export class ApprovalFanOutSuspended1763700970000 implements MigrationInterface {
  name = 'ApprovalFanOutSuspended1763700970000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(fanOut(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(fanOut(false));
  }
}
