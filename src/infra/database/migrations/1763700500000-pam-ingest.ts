import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent ingest of elevation requests (spec P4.6, docs/requirements.md).
 *
 * - agent_rate_buckets: the per-device token bucket (10 per second, bursts of 20: docs/api-conventions.md)
 *   when no Redis is configured, one row per device updated by a single upsert, so every
 *   instance shares it. Half-empty pages (fillfactor 50) keep the constant rewrites HOT.
 * - elevation_requests.software_evidence: what audit-mode software policies observed about the
 *   executable (the bridge attaches it, whatever decides the request).
 */
export class PamIngest1763700500000 implements MigrationInterface {
  name = 'PamIngest1763700500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_rate_buckets (
        org_id uuid NOT NULL,
        device_id uuid NOT NULL,
        tokens double precision NOT NULL CHECK (tokens >= 0),
        refilled_at timestamptz NOT NULL,
        PRIMARY KEY (org_id, device_id),
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id) ON DELETE CASCADE
      ) WITH (fillfactor = 50);

      ALTER TABLE elevation_requests
        ADD COLUMN software_evidence jsonb CHECK (software_evidence IS NULL OR jsonb_typeof(software_evidence) = 'array');

      ALTER TABLE agent_rate_buckets ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON agent_rate_buckets USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      GRANT SELECT, INSERT, UPDATE ON agent_rate_buckets TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE elevation_requests DROP COLUMN software_evidence;
      DROP TABLE agent_rate_buckets;
    `);
  }
}
