import { MigrationInterface, QueryRunner } from 'typeorm';

const ACTIVE = `('approved', 'auto_approved', 'actuating')`;
const KEY = 'org_id, device_id, flow_type, status, site_id';

/**
 * The request list's exact `pagination.total` without counting rows (docs/pam-lifecycle.md, request list).
 *
 * - elevation_request_counts holds how many requests each (organization, device, flow type, stored
 *   status, site) has, kept by two statement-level triggers on elevation_requests in the same
 *   transaction as the rows, so a list statement reads a total exactly as of its own snapshot.
 *   Per device, not per site or organization: ingest of different devices never waits on one
 *   counter row, and the largest sum (an unfiltered total) reads a few rows per device instead of
 *   every request. Each trigger folds its statement's rows into one row per key and writes them in
 *   key order, so two statements updating many counters (two sweeps) cannot deadlock each other.
 * - The trigger functions run as the caller: a counter row belongs to the organization of the
 *   requests it counts, which the caller's statement on elevation_requests was just allowed to write.
 * - Indexes: with totals read from the counters, the four filter indexes no longer need the other
 *   filter columns as INCLUDE columns for index-only counts (a count with two filters and no time
 *   range reads counters). They go back to their keys only: about a quarter of the size each, and
 *   narrow entries where an index-only count remains (a filter with a time range). The two partial
 *   indexes of elevations in force become one, (expires_at, org_id): the sweeper reads its leading
 *   column across organizations, and a list or GET /pam/active of one organization compares org_id
 *   inside the index over the elevations whose window is open.
 */
export class PamRequestCounts1763700960000 implements MigrationInterface {
  name = 'PamRequestCounts1763700960000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- No request may be written between the backfill and the triggers.
      LOCK TABLE elevation_requests IN SHARE ROW EXCLUSIVE MODE;

      CREATE TABLE elevation_request_counts (
        org_id uuid NOT NULL,
        device_id uuid NOT NULL,
        flow_type varchar(32) NOT NULL,
        status varchar(16) NOT NULL,
        site_id uuid NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (${KEY})
      ) WITH (fillfactor = 50);
      -- n is not indexed, so a counter update is a heap-only (HOT) update; the free half of each page keeps it on its page.

      ALTER TABLE elevation_request_counts ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      -- Same form as the policy of elevation_requests: the settings are read once per query (InitPlans), not per row.
      CREATE POLICY tenant ON elevation_request_counts
        USING ((SELECT app_is_system()) OR org_id = ANY ((SELECT app_org_ids())::uuid[]))
        WITH CHECK (app_has_org_access(org_id));
      GRANT SELECT, INSERT, UPDATE ON elevation_request_counts TO app_user;

      CREATE FUNCTION app_elevation_request_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        INSERT INTO elevation_request_counts AS c (${KEY}, n)
        SELECT ${KEY}, count(*) FROM new_rows GROUP BY ${KEY} ORDER BY ${KEY}
        ON CONFLICT (${KEY}) DO UPDATE SET n = c.n + excluded.n;
        RETURN NULL;
      END
      $f$;

      CREATE FUNCTION app_elevation_request_counts_update() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        INSERT INTO elevation_request_counts AS c (${KEY}, n)
        SELECT ${KEY}, sum(d) FROM (
          SELECT ${KEY}, -1 AS d FROM old_rows
          UNION ALL
          SELECT ${KEY}, 1 AS d FROM new_rows
        ) x
        GROUP BY ${KEY} HAVING sum(d) <> 0 ORDER BY ${KEY}
        ON CONFLICT (${KEY}) DO UPDATE SET n = c.n + excluded.n;
        RETURN NULL;
      END
      $f$;

      CREATE TRIGGER elevation_requests_count_insert AFTER INSERT ON elevation_requests
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_elevation_request_counts_insert();
      CREATE TRIGGER elevation_requests_count_update AFTER UPDATE ON elevation_requests
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_elevation_request_counts_update();

      -- The backfill reads every organization's requests (row-level security also applies to the owner).
      SELECT set_config('app.scope', 'system', true);
      INSERT INTO elevation_request_counts (${KEY}, n)
      SELECT ${KEY}, count(*) FROM elevation_requests GROUP BY ${KEY};

      DROP INDEX elevation_requests_org_status_idx, elevation_requests_org_device_idx, elevation_requests_org_site_idx,
                 elevation_requests_org_flow_idx, elevation_requests_org_active_idx, elevation_requests_active_deadline_idx;
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_site_idx ON elevation_requests (org_id, site_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC);
      CREATE INDEX elevation_requests_active_deadline_idx ON elevation_requests (expires_at, org_id) WHERE status IN ${ACTIVE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER elevation_requests_count_update ON elevation_requests;
      DROP TRIGGER elevation_requests_count_insert ON elevation_requests;
      DROP FUNCTION app_elevation_request_counts_update();
      DROP FUNCTION app_elevation_request_counts_insert();
      DROP TABLE elevation_request_counts;

      DROP INDEX elevation_requests_org_status_idx, elevation_requests_org_device_idx, elevation_requests_org_site_idx,
                 elevation_requests_org_flow_idx, elevation_requests_active_deadline_idx;
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC)
        INCLUDE (flow_type, site_id, device_id, expires_at);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC)
        INCLUDE (status, flow_type, site_id, expires_at);
      CREATE INDEX elevation_requests_org_site_idx ON elevation_requests (org_id, site_id, requested_at DESC)
        INCLUDE (status, flow_type, device_id, expires_at);
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC)
        INCLUDE (status, site_id, device_id, expires_at);
      CREATE INDEX elevation_requests_org_active_idx ON elevation_requests (org_id, expires_at) WHERE status IN ${ACTIVE};
      CREATE INDEX elevation_requests_active_deadline_idx ON elevation_requests (expires_at) WHERE status IN ${ACTIVE};
    `);
  }
}
