import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Imports from another RMM (spec 2.10, docs/requirements.md): the import job rows (state lives
 * here, so any instance can resume or fail a job another started), the links from source ids
 * to local rows that make re-imports idempotent, and the fuzzy contact matches held back until
 * someone acknowledges them.
 */
export class Imports1763700410000 implements MigrationInterface {
  name = 'Imports1763700410000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE imports (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid NOT NULL REFERENCES partners(id) ON DELETE CASCADE,
        org_id uuid,
        format varchar(32) NOT NULL CHECK (format IN ('interchange', 'contacts_csv', 'custom_field_values_csv')),
        dry_run boolean NOT NULL,
        overwrite boolean NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        phases text[] NOT NULL,
        phases_completed integer NOT NULL DEFAULT 0,
        current_phase varchar(32),
        processed_items integer NOT NULL DEFAULT 0 CHECK (processed_items >= 0),
        total_items integer NOT NULL CHECK (total_items >= 0),
        -- The validated plan, kept only until the job ends (it holds contact details).
        plan jsonb,
        report jsonb NOT NULL DEFAULT '{}',
        timings jsonb NOT NULL DEFAULT '[]',
        error jsonb,
        attempts integer NOT NULL DEFAULT 0,
        -- Who asked, and the row-level-security scope the job runs with (the requester's).
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        actor_type varchar(16) NOT NULL CHECK (actor_type IN ('user', 'api_key')),
        actor_id uuid,
        scope jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        heartbeat_at timestamptz,
        finished_at timestamptz,
        UNIQUE (partner_id, id),
        FOREIGN KEY (partner_id, org_id) REFERENCES organizations(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX imports_partner_created_idx ON imports (partner_id, created_at DESC, id DESC);
      CREATE INDEX imports_org_created_idx ON imports (org_id, created_at DESC, id DESC) WHERE org_id IS NOT NULL;
      CREATE INDEX imports_unfinished_idx ON imports (status, heartbeat_at) WHERE status IN ('queued', 'running');

      -- Source id -> local row. namespace is the organization for ids that are only unique within
      -- one customer of the source (locations, devices, groups, customer-level content) and NULL
      -- for account-wide ids (customers, account-level content). org_id is the local row's
      -- organization (NULL for partner-wide rows) and decides who may see the link.
      CREATE TABLE import_links (
        partner_id uuid NOT NULL REFERENCES partners(id) ON DELETE CASCADE,
        source_system varchar(64) NOT NULL,
        kind varchar(32) NOT NULL CHECK (kind IN ('customer', 'location', 'device', 'device_group', 'custom_field', 'script', 'policy')),
        namespace uuid,
        external_id varchar(255) NOT NULL,
        org_id uuid,
        local_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE NULLS NOT DISTINCT (partner_id, source_system, kind, namespace, external_id),
        FOREIGN KEY (partner_id, org_id) REFERENCES organizations(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX import_links_org_idx ON import_links (org_id, kind, external_id);
      CREATE INDEX import_links_local_idx ON import_links (partner_id, kind, local_id);

      CREATE TABLE import_matches (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        import_id uuid NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
        kind varchar(16) NOT NULL DEFAULT 'contact' CHECK (kind IN ('contact')),
        source_ref varchar(255) NOT NULL,
        external_id varchar(255) NOT NULL,
        source jsonb NOT NULL,
        candidate_id uuid,
        reason varchar(16) NOT NULL CHECK (reason IN ('email', 'name')),
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'merged', 'created')),
        resolved_contact_id uuid,
        resolved_by uuid REFERENCES users(id) ON DELETE SET NULL,
        resolved_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        FOREIGN KEY (org_id, candidate_id) REFERENCES contacts(org_id, id) ON DELETE SET NULL (candidate_id),
        FOREIGN KEY (org_id, resolved_contact_id) REFERENCES contacts(org_id, id) ON DELETE SET NULL (resolved_contact_id)
      );
      -- A source contact waits in at most one pending match per organization.
      CREATE UNIQUE INDEX import_matches_pending_idx ON import_matches (org_id, external_id) WHERE status = 'pending';
      CREATE INDEX import_matches_import_idx ON import_matches (import_id, created_at, id);

      ALTER TABLE imports ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON imports USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      ALTER TABLE import_links ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON import_links USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      ALTER TABLE import_matches ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON import_matches USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));

      GRANT SELECT, INSERT, UPDATE ON imports, import_matches TO app_user;
      GRANT SELECT, INSERT, UPDATE, DELETE ON import_links TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS import_matches, import_links, imports;`);
  }
}
