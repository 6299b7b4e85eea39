import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SSO providers, their login sessions and identity links, and DNS-verified domains.
 *  - A provider belongs to exactly one organization or one partner (CHECK), and every table
 *    hanging off it repeats that owner so its foreign keys stay inside the tenant.
 *  - `generation` is bumped by every configuration or status change; login sessions record
 *    the generation they started under, so a reconfigured provider invalidates them.
 *  - Deleting a provider removes its login sessions and identity links in the same statement.
 */
export class SsoProviders1763700200000 implements MigrationInterface {
  name = 'SsoProviders1763700200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sso_providers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        type varchar(8) NOT NULL CHECK (type IN ('oidc', 'saml')),
        status varchar(16) NOT NULL DEFAULT 'inactive' CHECK (status IN ('active', 'inactive', 'testing')),
        preset varchar(64),
        issuer varchar(500),
        client_id varchar(255),
        client_secret text,
        authorization_url varchar(500),
        token_url varchar(500),
        userinfo_url varchar(500),
        jwks_url varchar(500),
        scopes varchar(500),
        entity_id varchar(500),
        sso_url varchar(500),
        certificate text,
        name_id_format varchar(255),
        force_authn boolean NOT NULL DEFAULT false,
        attribute_mapping jsonb NOT NULL DEFAULT '{"email": "email", "name": "name"}'
          CHECK (jsonb_typeof(attribute_mapping) = 'object' AND attribute_mapping ? 'email' AND attribute_mapping ? 'name'),
        auto_provision boolean NOT NULL DEFAULT true,
        default_role_id uuid,
        -- Who last saved default_role_id: sign-in re-checks that this administrator may still grant it.
        default_role_set_by uuid REFERENCES users(id) ON DELETE SET NULL,
        allowed_domains varchar(1000),
        enforce_sso boolean NOT NULL DEFAULT false,
        trusts_idp_mfa boolean NOT NULL DEFAULT false,
        generation integer NOT NULL DEFAULT 1 CHECK (generation >= 1),
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        updated_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        -- A partner provider never provisions users (spec 1.6.4).
        CHECK (partner_id IS NULL OR NOT auto_provision),
        UNIQUE (org_id, id),
        UNIQUE (partner_id, id),
        -- The default role belongs to the provider's owner; MATCH SIMPLE skips the key whose owner column is null.
        FOREIGN KEY (org_id, default_role_id) REFERENCES roles(org_id, id) ON DELETE SET NULL (default_role_id),
        FOREIGN KEY (partner_id, default_role_id) REFERENCES roles(partner_id, id) ON DELETE SET NULL (default_role_id)
      );
      -- "Oldest active provider" of an organization or a partner (login entry, discovery, check).
      CREATE INDEX sso_providers_org_status_idx ON sso_providers (org_id, status, created_at, id) WHERE org_id IS NOT NULL;
      CREATE INDEX sso_providers_partner_status_idx ON sso_providers (partner_id, status, created_at, id) WHERE partner_id IS NOT NULL;

      CREATE TABLE sso_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid,
        partner_id uuid,
        provider_id uuid NOT NULL,
        state varchar(64) NOT NULL UNIQUE,
        nonce varchar(64) NOT NULL,
        code_verifier varchar(128) NOT NULL,
        redirect_url varchar(500) NOT NULL DEFAULT '/',
        generation integer NOT NULL,
        purpose varchar(8) NOT NULL DEFAULT 'login' CHECK (purpose IN ('login', 'link')),
        link_user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        link_session_id uuid REFERENCES sessions(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        CHECK ((purpose = 'login' AND link_user_id IS NULL AND link_session_id IS NULL)
            OR (purpose = 'link' AND link_user_id IS NOT NULL AND link_session_id IS NOT NULL)),
        FOREIGN KEY (org_id, provider_id) REFERENCES sso_providers(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, provider_id) REFERENCES sso_providers(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX sso_sessions_org_provider_idx ON sso_sessions (org_id, provider_id) WHERE org_id IS NOT NULL;
      CREATE INDEX sso_sessions_partner_provider_idx ON sso_sessions (partner_id, provider_id) WHERE partner_id IS NOT NULL;
      CREATE INDEX sso_sessions_expires_idx ON sso_sessions (expires_at);

      CREATE TABLE user_sso_identities (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid,
        partner_id uuid,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        provider_id uuid NOT NULL,
        external_id varchar(255) NOT NULL CHECK (length(external_id) >= 1),
        email varchar(255),
        profile jsonb NOT NULL DEFAULT '{}',
        access_token text,
        refresh_token text,
        token_expires_at timestamptz,
        last_login_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        UNIQUE (provider_id, external_id),
        FOREIGN KEY (org_id, provider_id) REFERENCES sso_providers(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, provider_id) REFERENCES sso_providers(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX user_sso_identities_org_provider_idx ON user_sso_identities (org_id, provider_id) WHERE org_id IS NOT NULL;
      CREATE INDEX user_sso_identities_partner_provider_idx ON user_sso_identities (partner_id, provider_id) WHERE partner_id IS NOT NULL;
      CREATE INDEX user_sso_identities_user_idx ON user_sso_identities (user_id);

      CREATE TABLE sso_verified_domains (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        -- Normalised by the service: lower-case ASCII (IDN in punycode), no trailing dot.
        domain varchar(253) NOT NULL CHECK (domain = lower(domain) AND length(domain) >= 3 AND domain NOT LIKE '%.'),
        -- Published in DNS by the organization, so it is not a secret.
        token varchar(64) NOT NULL,
        verified boolean NOT NULL DEFAULT false,
        verified_at timestamptz,
        last_checked_at timestamptz,
        -- Last time the TXT record was seen; re-verification un-verifies after a grace period without it.
        last_seen_at timestamptz,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (NOT verified OR (verified_at IS NOT NULL AND last_seen_at IS NOT NULL)),
        UNIQUE (org_id, domain),
        UNIQUE (org_id, id)
      );
      -- Discovery by email looks a domain up across organizations (and must see a second claimant).
      CREATE INDEX sso_verified_domains_domain_idx ON sso_verified_domains (domain) WHERE verified;
    `);

    await q.query(`
      ALTER TABLE sso_providers ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON sso_providers
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));

      ALTER TABLE sso_sessions ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON sso_sessions
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));

      ALTER TABLE user_sso_identities ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON user_sso_identities
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY own_read ON user_sso_identities FOR SELECT USING (user_id = app_current_user_id());

      ALTER TABLE sso_verified_domains ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON sso_verified_domains
        USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));

      GRANT SELECT, INSERT, UPDATE, DELETE ON sso_providers, sso_sessions, user_sso_identities, sso_verified_domains TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sso_verified_domains, user_sso_identities, sso_sessions, sso_providers`);
  }
}
