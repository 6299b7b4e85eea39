import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SSO hardening (security review, issue 13, items 13 and 14a).
 *  - `sessions.sso_provider_id` names the provider that minted an SSO session, and only an SSO
 *    session: a CHECK ties it to `auth_method`, so a provider's sessions can be found (and
 *    ended) when it is deactivated, deleted or pointed at another issuer or client id. The
 *    partial index serves that lookup over live sessions only.
 *  - `sso_sessions` holds each login round trip's state, nonce, PKCE code verifier and
 *    post-login target. Only the public sign-in routes need it, and they run in system
 *    context; a tenant-scoped transaction (an organization or partner administrator's request)
 *    has no business reading a verifier or a state. The tenant policy is replaced by a
 *    system-only one.
 */
export class SsoHardening1763700700000 implements MigrationInterface {
  name = 'SsoHardening1763700700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sessions ADD CONSTRAINT sessions_sso_provider_check CHECK ((auth_method = 'sso') = (sso_provider_id IS NOT NULL));
      CREATE INDEX sessions_sso_provider_live_idx ON sessions (sso_provider_id) WHERE sso_provider_id IS NOT NULL AND revoked_at IS NULL;

      DROP POLICY tenant ON sso_sessions;
      CREATE POLICY system_only ON sso_sessions USING (app_is_system()) WITH CHECK (app_is_system());
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP POLICY system_only ON sso_sessions;
      CREATE POLICY tenant ON sso_sessions
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));

      DROP INDEX sessions_sso_provider_live_idx;
      ALTER TABLE sessions DROP CONSTRAINT sessions_sso_provider_check;
    `);
  }
}
