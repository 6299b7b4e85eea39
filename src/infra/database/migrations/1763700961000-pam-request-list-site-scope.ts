import { MigrationInterface, QueryRunner } from 'typeorm';

const SITE_POLICY_PER_QUERY = `(SELECT app_site_ids()) IS NULL OR site_id = ANY ((SELECT app_site_ids())::uuid[])`;

/**
 * The request list (migration 1763700960000) under the site restriction of row-level security
 * (migration 1763700950000).
 *
 * - A site-restricted caller reads and writes only the counters of its sites, as with the requests
 *   they count, so a list that forgot the caller's sites would still not count other sites'
 *   requests. A statement that may write a request may write its counter: both test the same site.
 * - The site policy of elevation_requests is evaluated on every row a list counts. Written with
 *   scalar subqueries, as the organization policy is, PostgreSQL reads the setting once per query
 *   (an InitPlan) instead of twice per row: half the time of a 22,000-row count. Same test.
 * - The policy reads site_id, so an index-only count needs site_id in the index: the status,
 *   flow-type, device and time indexes carry it (INCLUDE); the site index has it as a key.
 */
export class PamRequestListSiteScope1763700961000 implements MigrationInterface {
  name = 'PamRequestListSiteScope1763700961000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE POLICY site_scope ON elevation_request_counts AS RESTRICTIVE
        USING (${SITE_POLICY_PER_QUERY})
        WITH CHECK (app_has_site_access(site_id));

      DROP POLICY site_scope ON elevation_requests;
      CREATE POLICY site_scope ON elevation_requests AS RESTRICTIVE
        USING (${SITE_POLICY_PER_QUERY})
        WITH CHECK (app_has_site_access(site_id));

      DROP INDEX elevation_requests_org_status_idx, elevation_requests_org_device_idx, elevation_requests_org_flow_idx,
                 elevation_requests_org_time_idx;
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC) INCLUDE (site_id);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC) INCLUDE (site_id);
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC) INCLUDE (site_id);
      CREATE INDEX elevation_requests_org_time_idx ON elevation_requests (org_id, requested_at DESC, id DESC) INCLUDE (site_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX elevation_requests_org_status_idx, elevation_requests_org_device_idx, elevation_requests_org_flow_idx,
                 elevation_requests_org_time_idx;
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC);
      CREATE INDEX elevation_requests_org_time_idx ON elevation_requests (org_id, requested_at DESC, id DESC);

      DROP POLICY site_scope ON elevation_requests;
      CREATE POLICY site_scope ON elevation_requests AS RESTRICTIVE
        USING (app_has_site_access(site_id)) WITH CHECK (app_has_site_access(site_id));
      DROP POLICY site_scope ON elevation_request_counts;
    `);
  }
}
