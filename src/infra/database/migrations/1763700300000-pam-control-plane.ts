import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PAM control plane (spec P2.2–P2.4, docs/requirements.md) and the elevation-request table the request lifecycle
 * builds on (2.1). Conventions as in the foundation: org_id leads every key and index,
 * in-tenant foreign keys are composite, RLS is forced.
 *
 * - pam_rules_versions: one counter per organization, bumped in the same transaction as every
 *   rule or signer-group write; the compiled-rule cache of every instance keys on it.
 * - pam_rules.match_signer_group_id has no ON DELETE action: deleting a group still in use is
 *   refused (the API answers 409 signer_group_in_use before it gets here).
 * - Site-scoped rules go with their site (ON DELETE CASCADE): they can match nothing else.
 * - elevation_requests keeps history: no DELETE grant, no cascade from sites or devices.
 *   Its indexes: (org_id, requested_at DESC, id DESC) for preview and the unfiltered list,
 *   one per list filter, and a partial index on expires_at for the active list and expiry.
 *   No covering index for preview: command_line is unbounded text (an index tuple is capped
 *   at about 2.7 kB) and a preview reads most columns of most rows of its window anyway.
 */
export class PamControlPlane1763700300000 implements MigrationInterface {
  name = 'PamControlPlane1763700300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- Every element non-NULL and 1..max_len characters; NULL elements or empty strings fail.
      CREATE FUNCTION pam_text_elements_within(arr text[], max_len int) RETURNS boolean
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
        $f$ SELECT coalesce(bool_and(x IS NOT NULL AND char_length(x) BETWEEN 1 AND max_len), true) FROM unnest(arr) AS x $f$;

      CREATE TABLE pam_signer_groups (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (char_length(btrim(name)) >= 1),
        description text CHECK (char_length(description) <= 2000),
        signers text[] NOT NULL DEFAULT '{}'
          CHECK (cardinality(signers) <= 500 AND pam_text_elements_within(signers, 255)),
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id)
      );
      CREATE UNIQUE INDEX pam_signer_groups_org_name_key ON pam_signer_groups (org_id, lower(name));

      CREATE TABLE pam_rules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        site_id uuid,
        name varchar(255) NOT NULL CHECK (char_length(btrim(name)) >= 1),
        verdict varchar(32) NOT NULL CHECK (verdict IN ('auto_approve', 'auto_deny', 'require_approval', 'ignore')),
        priority int NOT NULL DEFAULT 100,
        enabled boolean NOT NULL DEFAULT true,
        match_signer varchar(255),
        match_signer_group_id uuid,
        match_hash varchar(64) CHECK (match_hash ~ '^[0-9a-f]{64}$'),
        match_path_glob varchar(1024),
        match_parent_image varchar(1024),
        match_command_line varchar(1024),
        match_user varchar(255),
        match_ad_group varchar(255),
        match_tool_name varchar(255),
        match_risk_tier smallint CHECK (match_risk_tier BETWEEN 0 AND 4),
        match_negate text[] CHECK (
          match_negate <@ ARRAY['signer', 'signerGroup', 'hash', 'pathGlob', 'parentImage', 'commandLine', 'user', 'adGroup', 'toolName', 'riskTier']::text[]
          AND array_position(match_negate, NULL) IS NULL),
        time_window jsonb CHECK (time_window IS NULL OR jsonb_typeof(time_window) = 'object'),
        approval_duration_minutes int CHECK (approval_duration_minutes BETWEEN 1 AND 1440),
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        CONSTRAINT pam_rules_signer_xor_group CHECK (match_signer IS NULL OR match_signer_group_id IS NULL),
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, match_signer_group_id) REFERENCES pam_signer_groups(org_id, id)
      );
      CREATE INDEX pam_rules_org_order_idx ON pam_rules (org_id, priority, created_at, id);
      CREATE INDEX pam_rules_org_site_idx ON pam_rules (org_id, site_id) WHERE site_id IS NOT NULL;
      CREATE INDEX pam_rules_org_signer_group_idx ON pam_rules (org_id, match_signer_group_id) WHERE match_signer_group_id IS NOT NULL;

      CREATE TABLE pam_rules_versions (
        org_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        version bigint NOT NULL DEFAULT 0
      );

      CREATE TABLE pam_org_config (
        org_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        default_unmatched_verdict varchar(32) NOT NULL DEFAULT 'require_approval'
          CHECK (default_unmatched_verdict IN ('require_approval', 'auto_deny')),
        default_approval_duration_minutes int NOT NULL DEFAULT 15 CHECK (default_approval_duration_minutes BETWEEN 1 AND 1440),
        updated_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE elevation_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL,
        site_id uuid NOT NULL,
        device_id uuid NOT NULL,
        flow_type varchar(32) NOT NULL CHECK (flow_type IN ('uac_intercept', 'tech_jit_admin', 'ai_tool_action')),
        status varchar(16) NOT NULL
          CHECK (status IN ('pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating')),
        subject_username varchar(255),
        subject_user_id uuid,
        target_executable_path varchar(1024),
        target_executable_hash char(64) CHECK (target_executable_hash ~ '^[0-9a-f]{64}$'),
        target_executable_signer varchar(255),
        parent_image varchar(1024),
        command_line text,
        pid int,
        observed_at timestamptz,
        reason text,
        tool_name varchar(255),
        tool_action varchar(255),
        risk_tier smallint CHECK (risk_tier BETWEEN 0 AND 4),
        action_digest varchar(128),
        requested_at timestamptz NOT NULL DEFAULT now(),
        decided_at timestamptz,
        expires_at timestamptz,
        duration_minutes int,
        decision_source varchar(16) CHECK (decision_source IN ('software_policy', 'pam_rule', 'human', 'org_default')),
        matched_policy_id uuid,
        matched_policy_name varchar(255),
        pam_rule_id uuid,
        pam_rule_name varchar(255),
        approved_by uuid,
        denied_by uuid,
        revoked_by uuid,
        decision_reason text,
        revoke_reason text,
        actuated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id),
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id)
      );
      CREATE INDEX elevation_requests_org_time_idx ON elevation_requests (org_id, requested_at DESC, id DESC);
      CREATE INDEX elevation_requests_org_status_idx ON elevation_requests (org_id, status, requested_at DESC);
      CREATE INDEX elevation_requests_org_device_idx ON elevation_requests (org_id, device_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_site_idx ON elevation_requests (org_id, site_id, requested_at DESC);
      CREATE INDEX elevation_requests_org_active_idx ON elevation_requests (org_id, expires_at)
        WHERE status IN ('approved', 'auto_approved', 'actuating');
      -- Rule preview aggregates by hour; without this the planner takes every timestamp for its
      -- own group and refuses a parallel partial aggregate (see rule-preview.repository.ts).
      CREATE STATISTICS elevation_requests_hour_stats
        ON (date_bin('1 hour', requested_at, TIMESTAMPTZ '1970-01-01 00:00:00+00')) FROM elevation_requests;

      ALTER TABLE pam_signer_groups ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON pam_signer_groups USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE pam_rules ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON pam_rules USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE pam_rules_versions ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON pam_rules_versions USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE pam_org_config ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON pam_org_config USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE elevation_requests ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      -- The same test as app_has_org_access(org_id) (org_id is NOT NULL), written with scalar
      -- subqueries so PostgreSQL reads the settings once per query (an InitPlan) instead of
      -- parsing the organization list for every row: on a preview over a million requests the
      -- per-row form costs more than the rule match itself.
      CREATE POLICY tenant ON elevation_requests
        USING ((SELECT app_is_system()) OR org_id = ANY ((SELECT app_org_ids())::uuid[]))
        WITH CHECK (app_has_org_access(org_id));
      -- These helpers only read transaction settings, which PostgreSQL copies to parallel
      -- workers, so they are parallel safe. Declared unsafe (the default), they keep every
      -- query on a table whose policy calls them from using parallel workers.
      ALTER FUNCTION app_is_system() PARALLEL SAFE;
      ALTER FUNCTION app_org_ids() PARALLEL SAFE;

      GRANT SELECT, INSERT, UPDATE, DELETE ON pam_signer_groups, pam_rules TO app_user;
      GRANT SELECT, INSERT, UPDATE ON pam_rules_versions, pam_org_config, elevation_requests TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE elevation_requests;
      DROP TABLE pam_org_config;
      DROP TABLE pam_rules_versions;
      DROP TABLE pam_rules;
      DROP TABLE pam_signer_groups;
      DROP FUNCTION pam_text_elements_within(text[], int);
      ALTER FUNCTION app_is_system() PARALLEL UNSAFE;
      ALTER FUNCTION app_org_ids() PARALLEL UNSAFE;
    `);
  }
}
