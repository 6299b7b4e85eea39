import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SAML Single Logout and encrypted assertions (issue 16, items 3 and 4).
 *  - saml_sp_keys: the service provider's RSA key pairs, per provider. The newest (retires_at
 *    NULL) signs LogoutRequests and LogoutResponses and is the encryption key published in the
 *    SP metadata; a rotation sets the previous key's retires_at to the end of the overlap window,
 *    during which it stays published for encryption and still decrypts. The private key is sealed
 *    with the encryption key; the certificate is public.
 *  - saml_sp_settings: per provider, the IdP's Single Logout service URL (HTTP-Redirect) and
 *    whether assertions must arrive encrypted.
 * Read by the public SAML routes in system context, and by the provider's administrators
 * (owner access; writes need owner write, as for the provider itself).
 */
export class SamlSpKeysAndLogout1763700942000 implements MigrationInterface {
  name = 'SamlSpKeysAndLogout1763700942000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE saml_sp_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid,
        partner_id uuid,
        provider_id uuid NOT NULL,
        certificate text NOT NULL CHECK (certificate LIKE '-----BEGIN CERTIFICATE-----%'),
        private_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        retires_at timestamptz,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        CHECK (retires_at IS NULL OR retires_at >= created_at),
        FOREIGN KEY (org_id, provider_id) REFERENCES sso_providers(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, provider_id) REFERENCES sso_providers(partner_id, id) ON DELETE CASCADE
      );
      -- One current key per provider: two concurrent first uses cannot both create one.
      CREATE UNIQUE INDEX saml_sp_keys_current_idx ON saml_sp_keys (provider_id) WHERE retires_at IS NULL;
      CREATE INDEX saml_sp_keys_provider_idx ON saml_sp_keys (provider_id, created_at DESC);
      CREATE INDEX saml_sp_keys_org_provider_idx ON saml_sp_keys (org_id, provider_id) WHERE org_id IS NOT NULL;
      CREATE INDEX saml_sp_keys_partner_provider_idx ON saml_sp_keys (partner_id, provider_id) WHERE partner_id IS NOT NULL;

      CREATE TABLE saml_sp_settings (
        provider_id uuid PRIMARY KEY,
        org_id uuid,
        partner_id uuid,
        idp_slo_url varchar(500),
        require_encrypted_assertions boolean NOT NULL DEFAULT false,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid REFERENCES users(id) ON DELETE SET NULL,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        FOREIGN KEY (org_id, provider_id) REFERENCES sso_providers(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (partner_id, provider_id) REFERENCES sso_providers(partner_id, id) ON DELETE CASCADE
      );
      CREATE INDEX saml_sp_settings_org_idx ON saml_sp_settings (org_id) WHERE org_id IS NOT NULL;
      CREATE INDEX saml_sp_settings_partner_idx ON saml_sp_settings (partner_id) WHERE partner_id IS NOT NULL;

      ALTER TABLE saml_sp_keys ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON saml_sp_keys
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_write(org_id, partner_id));
      ALTER TABLE saml_sp_settings ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON saml_sp_settings
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_write(org_id, partner_id));

      GRANT SELECT, INSERT, UPDATE ON saml_sp_keys, saml_sp_settings TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE saml_sp_settings, saml_sp_keys`);
  }
}
