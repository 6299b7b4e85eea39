import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Password and MFA hardening (issue 13):
 *  - mfa_challenges: the second sign-in step is a server-side record, single use, with its own
 *    budget of wrong codes. The CHECKs keep any writer within the rules: at most five wrong
 *    codes are ever recorded, and a challenge that reached five is never consumed. Like
 *    password_reset_tokens, only system context reads or writes it (sign-in runs there).
 *  - password_reset_tokens: at most one unused token per account (a partial unique index), so a
 *    newer reset link always replaces an older one. Existing duplicates are retired first.
 */
export class AuthHardening1763700710000 implements MigrationInterface {
  name = 'AuthHardening1763700710000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mfa_challenges (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash varchar(64) NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        attempts integer NOT NULL DEFAULT 0 CONSTRAINT mfa_challenges_attempts_check CHECK (attempts BETWEEN 0 AND 5),
        consumed_at timestamptz,
        CONSTRAINT mfa_challenges_burned_check CHECK (consumed_at IS NULL OR attempts < 5)
      );
      -- The account budget sums the wrong codes of an account's recent challenges.
      CREATE INDEX mfa_challenges_user_idx ON mfa_challenges (user_id, created_at);
      ALTER TABLE mfa_challenges ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY system_only ON mfa_challenges USING (app_is_system()) WITH CHECK (app_is_system());
      GRANT SELECT, INSERT, UPDATE, DELETE ON mfa_challenges TO app_user;

      UPDATE password_reset_tokens t SET used_at = now()
       WHERE t.used_at IS NULL
         AND EXISTS (SELECT 1 FROM password_reset_tokens n
                      WHERE n.user_id = t.user_id AND n.used_at IS NULL AND (n.created_at, n.id) > (t.created_at, t.id));
      CREATE UNIQUE INDEX password_reset_tokens_one_open_idx ON password_reset_tokens (user_id) WHERE used_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX password_reset_tokens_one_open_idx;
      DROP TABLE mfa_challenges;
    `);
  }
}
