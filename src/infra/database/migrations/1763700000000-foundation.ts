import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Foundation schema: tenancy, people, sessions, keys, agents, audit, and the row-level-security
 * helpers every later table uses. Conventions for every tenant table:
 *  - the tenant column (org_id or partner_id) leads the keys and indexes (distributable by tenant);
 *  - foreign keys inside a tenant are composite (org_id, id), so a row can never point into another tenant;
 *  - RLS enabled and forced, policies through app_has_org_access / app_has_partner_access.
 */
export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'app_user') THEN
          CREATE ROLE app_user NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
        END IF;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- another database on this cluster created it concurrently
      END $$;
      CREATE EXTENSION IF NOT EXISTS pgcrypto;

      -- Transaction-local tenant settings (set_config(name, value, true)); no setting means no access.
      CREATE FUNCTION app_current_scope() RETURNS text LANGUAGE sql STABLE AS
        $f$ SELECT nullif(current_setting('app.scope', true), '') $f$;
      CREATE FUNCTION app_is_system() RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT coalesce(current_setting('app.scope', true) = 'system', false) $f$;
      CREATE FUNCTION app_current_user_id() RETURNS uuid LANGUAGE sql STABLE AS
        $f$ SELECT nullif(current_setting('app.user_id', true), '')::uuid $f$;
      CREATE FUNCTION app_org_ids() RETURNS uuid[] LANGUAGE sql STABLE AS
        $f$ SELECT coalesce(nullif(current_setting('app.org_ids', true), ''), '{}')::uuid[] $f$;
      CREATE FUNCTION app_partner_ids() RETURNS uuid[] LANGUAGE sql STABLE AS
        $f$ SELECT coalesce(nullif(current_setting('app.partner_ids', true), ''), '{}')::uuid[] $f$;
      CREATE FUNCTION app_has_org_access(p_org uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT app_is_system() OR (p_org IS NOT NULL AND p_org = ANY (app_org_ids())) $f$;
      CREATE FUNCTION app_has_partner_access(p_partner uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT app_is_system() OR (p_partner IS NOT NULL AND p_partner = ANY (app_partner_ids())) $f$;
      -- Rows owned by either an organization or a partner (roles, providers, API keys, audit).
      CREATE FUNCTION app_has_owner_access(p_org uuid, p_partner uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT CASE WHEN p_org IS NOT NULL THEN app_has_org_access(p_org) ELSE app_has_partner_access(p_partner) END $f$;

      CREATE TABLE partners (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid NOT NULL REFERENCES partners(id),
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (partner_id, id)
      );

      CREATE TABLE sites (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        timezone varchar(64) NOT NULL DEFAULT 'UTC',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        UNIQUE (org_id, name)
      );

      CREATE TABLE device_groups (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        site_id uuid,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        UNIQUE (org_id, name),
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id) ON DELETE CASCADE
      );

      CREATE TABLE devices (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        site_id uuid NOT NULL,
        hostname varchar(255) NOT NULL CHECK (length(hostname) >= 1),
        os_type varchar(32),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'decommissioned')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id)
      );
      CREATE INDEX devices_org_site_idx ON devices (org_id, site_id);
      CREATE INDEX devices_org_hostname_idx ON devices (org_id, lower(hostname));

      CREATE TABLE device_group_members (
        org_id uuid NOT NULL,
        group_id uuid NOT NULL,
        device_id uuid NOT NULL,
        PRIMARY KEY (org_id, group_id, device_id),
        FOREIGN KEY (org_id, group_id) REFERENCES device_groups(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id) ON DELETE CASCADE
      );
      CREATE INDEX device_group_members_device_idx ON device_group_members (org_id, device_id);

      -- One enrolled agent per device; the token is stored as a SHA-256 hash only.
      CREATE TABLE agents (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        device_id uuid NOT NULL,
        token_hash varchar(64) NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz,
        revoked_at timestamptz,
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id) ON DELETE CASCADE
      );
      CREATE UNIQUE INDEX agents_one_active_per_device ON agents (org_id, device_id) WHERE revoked_at IS NULL;

      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email varchar(255) NOT NULL CHECK (length(email) >= 3),
        name varchar(255) NOT NULL DEFAULT '',
        password_hash text,
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        totp_secret text,
        totp_pending_secret text,
        totp_last_step bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX users_email_lower_idx ON users (lower(email));

      CREATE TABLE roles (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        scope varchar(16) NOT NULL CHECK (scope IN ('organization', 'partner')),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        permissions text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((scope = 'organization' AND org_id IS NOT NULL AND partner_id IS NULL)
            OR (scope = 'partner' AND partner_id IS NOT NULL AND org_id IS NULL)),
        UNIQUE (org_id, id),
        UNIQUE (partner_id, id)
      );
      CREATE UNIQUE INDEX roles_org_name_idx ON roles (org_id, lower(name)) WHERE org_id IS NOT NULL;
      CREATE UNIQUE INDEX roles_partner_name_idx ON roles (partner_id, lower(name)) WHERE partner_id IS NOT NULL;

      CREATE TABLE organization_memberships (
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role_id uuid NOT NULL,
        site_restricted boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (org_id, user_id),
        FOREIGN KEY (org_id, role_id) REFERENCES roles(org_id, id)
      );
      CREATE INDEX organization_memberships_user_idx ON organization_memberships (user_id);

      CREATE TABLE organization_membership_sites (
        org_id uuid NOT NULL,
        user_id uuid NOT NULL,
        site_id uuid NOT NULL,
        PRIMARY KEY (org_id, user_id, site_id),
        FOREIGN KEY (org_id, user_id) REFERENCES organization_memberships(org_id, user_id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id) ON DELETE CASCADE
      );

      CREATE TABLE partner_memberships (
        partner_id uuid NOT NULL REFERENCES partners(id) ON DELETE CASCADE,
        user_id uuid NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
        role_id uuid NOT NULL,
        org_access varchar(16) NOT NULL DEFAULT 'all' CHECK (org_access IN ('all', 'selected')),
        site_restricted boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (partner_id, user_id),
        FOREIGN KEY (partner_id, role_id) REFERENCES roles(partner_id, id)
      );

      CREATE TABLE partner_membership_orgs (
        partner_id uuid NOT NULL,
        user_id uuid NOT NULL,
        org_id uuid NOT NULL,
        PRIMARY KEY (partner_id, user_id, org_id),
        FOREIGN KEY (partner_id, user_id) REFERENCES partner_memberships(partner_id, user_id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, org_id) REFERENCES organizations(partner_id, id) ON DELETE CASCADE
      );

      CREATE TABLE partner_membership_sites (
        partner_id uuid NOT NULL,
        user_id uuid NOT NULL,
        org_id uuid NOT NULL,
        site_id uuid NOT NULL,
        PRIMARY KEY (partner_id, user_id, site_id),
        FOREIGN KEY (partner_id, user_id) REFERENCES partner_memberships(partner_id, user_id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, org_id) REFERENCES organizations(partner_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id) ON DELETE CASCADE
      );

      CREATE TABLE sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        scope varchar(16) NOT NULL CHECK (scope IN ('organization', 'partner', 'system')),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        mfa boolean NOT NULL DEFAULT false,
        auth_method varchar(16) NOT NULL CHECK (auth_method IN ('password', 'sso')),
        sso_provider_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        revoked_reason varchar(64),
        CHECK ((scope = 'organization' AND org_id IS NOT NULL) OR (scope = 'partner' AND partner_id IS NOT NULL) OR scope = 'system')
      );
      CREATE INDEX sessions_user_idx ON sessions (user_id);

      -- A session is a refresh-token family: a rotated token used again revokes the session.
      CREATE TABLE refresh_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        token_hash varchar(64) NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
      CREATE INDEX refresh_tokens_session_idx ON refresh_tokens (session_id);

      CREATE TABLE password_reset_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash varchar(64) NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );

      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        key_prefix varchar(16) NOT NULL,
        key_hash varchar(64) NOT NULL UNIQUE,
        permissions text[] NOT NULL DEFAULT '{}',
        mfa_satisfied boolean NOT NULL DEFAULT false,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL))
      );
      CREATE INDEX api_keys_org_idx ON api_keys (org_id);
      CREATE INDEX api_keys_partner_idx ON api_keys (partner_id);

      CREATE TABLE audit_logs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid,
        partner_id uuid,
        actor_type varchar(16) NOT NULL CHECK (actor_type IN ('user', 'api_key', 'agent', 'system')),
        actor_id uuid,
        action varchar(100) NOT NULL,
        resource_type varchar(64),
        resource_id varchar(64),
        details jsonb NOT NULL DEFAULT '{}',
        ip varchar(64),
        request_id varchar(64),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX audit_logs_org_time_idx ON audit_logs (org_id, created_at DESC, id DESC);
      CREATE INDEX audit_logs_partner_time_idx ON audit_logs (partner_id, created_at DESC, id DESC);
      CREATE INDEX audit_logs_action_idx ON audit_logs (org_id, action, created_at DESC);
    `);

    await q.query(`
      ALTER TABLE partners ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON partners USING (app_has_partner_access(id)) WITH CHECK (app_has_partner_access(id));

      ALTER TABLE organizations ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY visible ON organizations FOR SELECT USING (app_has_org_access(id));
      CREATE POLICY create_by_partner ON organizations FOR INSERT
        WITH CHECK (app_has_org_access(id) AND app_has_partner_access(partner_id));
      CREATE POLICY update_own ON organizations FOR UPDATE USING (app_has_org_access(id)) WITH CHECK (app_has_org_access(id));
      CREATE POLICY delete_by_partner ON organizations FOR DELETE USING (app_has_org_access(id) AND app_has_partner_access(partner_id));

      ALTER TABLE sites ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON sites USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE device_groups ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON device_groups USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE devices ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON devices USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE device_group_members ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON device_group_members USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE agents ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON agents USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));

      ALTER TABLE roles ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON roles USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));

      ALTER TABLE organization_memberships ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON organization_memberships
        USING (app_has_org_access(org_id) OR user_id = app_current_user_id()) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE organization_membership_sites ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON organization_membership_sites USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE partner_memberships ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON partner_memberships
        USING (app_has_partner_access(partner_id) OR user_id = app_current_user_id()) WITH CHECK (app_has_partner_access(partner_id));
      ALTER TABLE partner_membership_orgs ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON partner_membership_orgs USING (app_has_partner_access(partner_id)) WITH CHECK (app_has_partner_access(partner_id));
      ALTER TABLE partner_membership_sites ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON partner_membership_sites USING (app_has_partner_access(partner_id)) WITH CHECK (app_has_partner_access(partner_id));

      -- Users are global identities: visible to themselves and to the tenants they belong to.
      -- Any scoped context may create one (it becomes visible once its membership row exists).
      ALTER TABLE users ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY visible ON users FOR SELECT USING (
        app_is_system() OR id = app_current_user_id()
        OR EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = users.id AND app_has_org_access(m.org_id))
        OR EXISTS (SELECT 1 FROM partner_memberships pm WHERE pm.user_id = users.id AND app_has_partner_access(pm.partner_id)));
      CREATE POLICY create_scoped ON users FOR INSERT WITH CHECK (app_current_scope() IS NOT NULL);
      CREATE POLICY update_visible ON users FOR UPDATE USING (
        app_is_system() OR id = app_current_user_id()
        OR EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = users.id AND app_has_org_access(m.org_id))
        OR EXISTS (SELECT 1 FROM partner_memberships pm WHERE pm.user_id = users.id AND app_has_partner_access(pm.partner_id)));
      CREATE POLICY delete_system ON users FOR DELETE USING (app_is_system());

      ALTER TABLE sessions ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY own ON sessions USING (app_is_system() OR user_id = app_current_user_id())
        WITH CHECK (app_is_system() OR user_id = app_current_user_id());
      ALTER TABLE refresh_tokens ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY own ON refresh_tokens USING (app_is_system() OR user_id = app_current_user_id())
        WITH CHECK (app_is_system() OR user_id = app_current_user_id());
      ALTER TABLE password_reset_tokens ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY system_only ON password_reset_tokens USING (app_is_system()) WITH CHECK (app_is_system());

      ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON api_keys USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));

      ALTER TABLE audit_logs ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY read_tenant ON audit_logs FOR SELECT USING (
        CASE WHEN org_id IS NULL AND partner_id IS NULL THEN app_is_system() ELSE app_has_owner_access(org_id, partner_id) END);
      CREATE POLICY append_tenant ON audit_logs FOR INSERT WITH CHECK (
        CASE WHEN org_id IS NULL AND partner_id IS NULL THEN app_is_system() ELSE app_has_owner_access(org_id, partner_id) END);

      GRANT USAGE ON SCHEMA public TO app_user;
      GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app_user;
      -- The audit trail is append-only for the application.
      REVOKE UPDATE, DELETE, TRUNCATE ON audit_logs FROM app_user;
      REVOKE ALL ON migrations FROM app_user;
    `);
  }

  async down(): Promise<void> {
    throw new Error('The foundation migration is not reversible; restore from backup instead.');
  }
}
