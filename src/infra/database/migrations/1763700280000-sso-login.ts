import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OIDC sign-in: one-time exchange codes, and link sessions that outlive their user.
 *  - An exchange code is stored as a SHA-256 hash with the token pair it redeems sealed by
 *    SecretBoxService; it lives 2 minutes and is consumed by one DELETE … RETURNING, so any
 *    instance can redeem it exactly once.
 *  - A link login session names the signed-in user and session that started it. Those
 *    references were foreign keys with ON DELETE CASCADE, which deleted the login session
 *    with the account, so the callback could only answer "session expired" at the login
 *    page instead of "user_gone" on the profile page. They become plain columns: the
 *    callback checks the user and session still exist, and the row expires in 10 minutes.
 */
export class SsoLogin1763700280000 implements MigrationInterface {
  name = 'SsoLogin1763700280000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE sso_exchange_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        code_hash varchar(64) NOT NULL UNIQUE,
        session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        -- The token pair, sealed under the code hash as context; never stored in clear.
        tokens text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        CHECK (expires_at <= created_at + interval '2 minutes')
      );
      CREATE INDEX sso_exchange_codes_org_idx ON sso_exchange_codes (org_id) WHERE org_id IS NOT NULL;
      CREATE INDEX sso_exchange_codes_partner_idx ON sso_exchange_codes (partner_id) WHERE partner_id IS NOT NULL;
      CREATE INDEX sso_exchange_codes_expires_idx ON sso_exchange_codes (expires_at);

      ALTER TABLE sso_exchange_codes ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON sso_exchange_codes
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      GRANT SELECT, INSERT, DELETE ON sso_exchange_codes TO app_user;

      ALTER TABLE sso_sessions DROP CONSTRAINT sso_sessions_link_user_id_fkey;
      ALTER TABLE sso_sessions DROP CONSTRAINT sso_sessions_link_session_id_fkey;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM sso_sessions WHERE purpose = 'link';
      ALTER TABLE sso_sessions ADD FOREIGN KEY (link_user_id) REFERENCES users(id) ON DELETE CASCADE;
      ALTER TABLE sso_sessions ADD FOREIGN KEY (link_session_id) REFERENCES sessions(id) ON DELETE CASCADE;
      DROP TABLE sso_exchange_codes;
    `);
  }
}
