import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The request list (GET /pam/elevation-requests) filters by status, device, site and flow type in
 * any combination and counts the matches. The per-filter indexes are made covering: each carries
 * the other filter columns (and expires_at, which the effective status reads), so a count with two
 * filters is an index-only scan instead of one heap fetch per row of the first filter. Same names,
 * same keys, so every plan that used them still does.
 */
export class PamRequestListIndexes1763700540000 implements MigrationInterface {
  name = 'PamRequestListIndexes1763700540000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX elevation_requests_org_status_idx, elevation_requests_org_device_idx, elevation_requests_org_site_idx, elevation_requests_org_flow_idx;
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC)
        INCLUDE (flow_type, site_id, device_id, expires_at);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC)
        INCLUDE (status, flow_type, site_id, expires_at);
      CREATE INDEX elevation_requests_org_site_idx ON elevation_requests (org_id, site_id, requested_at DESC)
        INCLUDE (status, flow_type, device_id, expires_at);
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC)
        INCLUDE (status, site_id, device_id, expires_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX elevation_requests_org_status_idx, elevation_requests_org_device_idx, elevation_requests_org_site_idx, elevation_requests_org_flow_idx;
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_site_idx ON elevation_requests (org_id, site_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC);
    `);
  }
}
