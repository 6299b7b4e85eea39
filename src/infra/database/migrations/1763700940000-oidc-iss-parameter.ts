import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 9207 (issue 16, item 5): whether the identity provider advertised, when the login round
 * trip started, that it names itself with `iss` in the authorization response. The callback of
 * such a round trip requires the parameter and compares it with the provider's issuer. Recorded
 * per login session so that the metadata read at the start is the one the callback applies.
 */
export class OidcIssParameter1763700940000 implements MigrationInterface {
  name = 'OidcIssParameter1763700940000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sso_sessions ADD COLUMN iss_required boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sso_sessions DROP COLUMN iss_required`);
  }
}
