import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-out that reaches every session (issue 16, item 3).
 *  - sso_session_links: for each session an SSO sign-in opened, what the identity provider will
 *    name it by when it signs the person out: the subject (OIDC `sub`, SAML NameID and its
 *    format) and the IdP's session (OIDC `sid`, SAML SessionIndex), and for OIDC the ID token,
 *    sealed, sent back as `id_token_hint` by an RP-initiated logout. A row lives as long as its
 *    session and goes when the session is ended by a sign-out.
 *  - sso_logout_tokens_seen: the `jti` of every back-channel logout token accepted, per
 *    provider, until the token expires, so a captured logout token cannot be replayed.
 * Only the public sign-in and sign-out routes touch them, in named system contexts, so the
 * policies admit the system context only (a tenant administrator has no use for a sealed ID
 * token). Both repeat the provider's owner so their foreign keys stay inside the tenant, and go
 * with the provider.
 */
export class SsoSignOut1763700941000 implements MigrationInterface {
  name = 'SsoSignOut1763700941000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sso_session_links (
        session_id uuid PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        org_id uuid,
        partner_id uuid,
        provider_id uuid NOT NULL,
        protocol varchar(8) NOT NULL CHECK (protocol IN ('oidc', 'saml')),
        subject varchar(255) NOT NULL CHECK (length(subject) >= 1),
        idp_session_id varchar(255) CHECK (length(idp_session_id) >= 1),
        name_id_format varchar(255),
        id_token text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        CHECK (protocol = 'oidc' OR id_token IS NULL),
        FOREIGN KEY (org_id, provider_id) REFERENCES sso_providers(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, provider_id) REFERENCES sso_providers(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX sso_session_links_subject_idx ON sso_session_links (provider_id, subject);
      CREATE INDEX sso_session_links_idp_session_idx ON sso_session_links (provider_id, idp_session_id) WHERE idp_session_id IS NOT NULL;
      CREATE INDEX sso_session_links_org_provider_idx ON sso_session_links (org_id, provider_id) WHERE org_id IS NOT NULL;
      CREATE INDEX sso_session_links_partner_provider_idx ON sso_session_links (partner_id, provider_id) WHERE partner_id IS NOT NULL;
      CREATE INDEX sso_session_links_expires_idx ON sso_session_links (expires_at);

      CREATE TABLE sso_logout_tokens_seen (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid,
        partner_id uuid,
        provider_id uuid NOT NULL,
        jti varchar(255) NOT NULL CHECK (length(jti) >= 1),
        seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        UNIQUE (provider_id, jti),
        FOREIGN KEY (org_id, provider_id) REFERENCES sso_providers(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, provider_id) REFERENCES sso_providers(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX sso_logout_tokens_seen_org_provider_idx ON sso_logout_tokens_seen (org_id, provider_id) WHERE org_id IS NOT NULL;
      CREATE INDEX sso_logout_tokens_seen_partner_provider_idx ON sso_logout_tokens_seen (partner_id, provider_id) WHERE partner_id IS NOT NULL;
      CREATE INDEX sso_logout_tokens_seen_expires_idx ON sso_logout_tokens_seen (expires_at);

      ALTER TABLE sso_session_links ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY system_only ON sso_session_links USING (app_is_system()) WITH CHECK (app_is_system());
      ALTER TABLE sso_logout_tokens_seen ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY system_only ON sso_logout_tokens_seen USING (app_is_system()) WITH CHECK (app_is_system());

      GRANT SELECT, INSERT, DELETE ON sso_session_links, sso_logout_tokens_seen TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sso_logout_tokens_seen, sso_session_links`);
  }
}
