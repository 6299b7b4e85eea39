import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Partner login branding (spec 2.7): one row per partner, readable and writable only by that
 * partner (and by system context, which the public login page uses). The API checks the same
 * rules first and more closely (the decoded bytes of a data URI must really be that image type);
 * these CHECKs keep any other writer from storing what the login page could not render safely:
 *  - logo: an https URL of at most 2048 characters, or a base64 data URI of PNG, JPEG or WebP
 *    whose decoded size is at most 256 KiB (262144 bytes). The CASE guarantees decode() only
 *    ever sees well-formed base64;
 *  - accent colour: #rrggbb;
 *  - headline: at most 120 characters.
 */
export class PartnerLoginBranding1763700600000 implements MigrationInterface {
  name = 'PartnerLoginBranding1763700600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE partner_login_branding (
        partner_id uuid PRIMARY KEY REFERENCES partners(id) ON DELETE CASCADE,
        logo_url text CONSTRAINT partner_login_branding_logo_url_check CHECK (
          CASE
            WHEN logo_url IS NULL THEN true
            WHEN logo_url ~ '^https://[^[:space:]]+$' THEN length(logo_url) <= 2048
            WHEN logo_url ~ '^data:image/(png|jpeg|webp);base64,([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$'
              THEN length(logo_url) > length(split_part(logo_url, ',', 1)) + 1
               AND octet_length(decode(split_part(logo_url, ',', 2), 'base64')) <= 262144
            ELSE false
          END),
        accent_color varchar(7) CONSTRAINT partner_login_branding_accent_color_check CHECK (accent_color ~ '^#[0-9a-fA-F]{6}$'),
        headline varchar(120),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      ALTER TABLE partner_login_branding ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON partner_login_branding
        USING (app_has_partner_access(partner_id)) WITH CHECK (app_has_partner_access(partner_id));
      -- Full replace keeps the row; nothing in the application deletes it.
      GRANT SELECT, INSERT, UPDATE ON partner_login_branding TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE partner_login_branding`);
  }
}
