import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';

export interface UserAuthRow {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  status: string;
  totp_secret: string | null;
  totp_pending_secret: string | null;
}

export interface LoginScope {
  scope: 'organization' | 'partner';
  org_id: string | null;
  partner_id: string | null;
}

/** Auth tables. Callers run these in system context (login, refresh) or the user's own context. */
@Injectable()
export class AuthRepository {
  constructor(private readonly db: DbService) {}

  userByEmail(email: string): Promise<UserAuthRow | null> {
    return this.db.one<UserAuthRow>(
      `SELECT id, email, name, password_hash, status, totp_secret, totp_pending_secret FROM users WHERE lower(email) = lower($1)`,
      [email],
    );
  }

  userById(id: string): Promise<UserAuthRow | null> {
    return this.db.one<UserAuthRow>(
      `SELECT id, email, name, password_hash, status, totp_secret, totp_pending_secret FROM users WHERE id = $1`,
      [id],
    );
  }

  /**
   * Partner technicians sign in to their partner; others to their oldest organization membership.
   * A membership its IdP deprovisioned (SCIM) does not count.
   */
  loginScope(userId: string): Promise<LoginScope | null> {
    return this.db.one<LoginScope>(
      `SELECT * FROM (
         SELECT 'partner' AS scope, NULL::uuid AS org_id, pm.partner_id, 0 AS rank, pm.created_at
           FROM partner_memberships pm JOIN partners p ON p.id = pm.partner_id AND p.status = 'active'
          WHERE pm.user_id = $1 AND pm.suspended_at IS NULL
         UNION ALL
         SELECT 'organization', m.org_id, NULL::uuid, 1, m.created_at
           FROM organization_memberships m JOIN organizations o ON o.id = m.org_id AND o.status = 'active'
          WHERE m.user_id = $1 AND m.suspended_at IS NULL
       ) s ORDER BY rank, created_at LIMIT 1`,
      [userId],
    );
  }

  /**
   * A new session and its first refresh token, in one statement (a data-modifying CTE): the
   * token's foreign key is checked at the end of the statement, when the session row exists.
   */
  async createSession(
    s: {
      userId: string;
      scope: string;
      orgId: string | null;
      partnerId: string | null;
      mfa: boolean;
      authMethod: 'password' | 'sso';
      ssoProviderId?: string | null;
      ttlSeconds: number;
    },
    refreshToken: { hash: string; ttlSeconds: number },
  ): Promise<string> {
    const row = await this.db.one<{ id: string }>(
      `WITH s AS (
         INSERT INTO sessions (user_id, scope, org_id, partner_id, mfa, auth_method, sso_provider_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8)) RETURNING id, user_id
       )
       INSERT INTO refresh_tokens (session_id, user_id, token_hash, expires_at)
       SELECT s.id, s.user_id, $9, now() + make_interval(secs => $10) FROM s
       RETURNING session_id AS id`,
      [s.userId, s.scope, s.orgId, s.partnerId, s.mfa, s.authMethod, s.ssoProviderId ?? null, s.ttlSeconds, refreshToken.hash, refreshToken.ttlSeconds],
    );
    return row!.id;
  }

  async insertRefreshToken(sessionId: string, userId: string, hash: string, ttlSeconds: number): Promise<void> {
    await this.db.exec(
      `INSERT INTO refresh_tokens (session_id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
      [sessionId, userId, hash, ttlSeconds],
    );
  }

  /** Atomically marks a refresh token used. Null when it was unknown, used or expired. */
  consumeRefreshToken(hash: string): Promise<{ session_id: string; user_id: string } | null> {
    return this.db.one(
      `UPDATE refresh_tokens SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
       RETURNING session_id, user_id`,
      [hash],
    );
  }

  refreshTokenFamily(hash: string): Promise<{ session_id: string; used_at: Date | null } | null> {
    return this.db.one(`SELECT session_id, used_at FROM refresh_tokens WHERE token_hash = $1`, [hash]);
  }

  session(id: string): Promise<{ id: string; user_id: string; scope: string; org_id: string | null; partner_id: string | null; mfa: boolean } | null> {
    return this.db.one(
      `SELECT s.id, s.user_id, s.scope, s.org_id, s.partner_id, s.mfa FROM sessions s JOIN users u ON u.id = s.user_id AND u.status = 'active'
        WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [id],
    );
  }

  async revokeSession(id: string, reason: string): Promise<void> {
    await this.db.exec(`UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE id = $1 AND revoked_at IS NULL`, [id, reason]);
  }

  async revokeUserSessions(userId: string, reason: string, exceptSessionId: string | null = null): Promise<void> {
    await this.db.exec(
      `UPDATE sessions SET revoked_at = now(), revoked_reason = $2 WHERE user_id = $1 AND revoked_at IS NULL AND ($3::uuid IS NULL OR id <> $3)`,
      [userId, reason, exceptSessionId],
    );
  }

  /** Seconds since the session's sign-in (a refresh does not renew it); null when the session is gone. */
  async sessionAgeSeconds(id: string): Promise<number | null> {
    const row = await this.db.one<{ age: number }>(
      `SELECT extract(epoch FROM now() - created_at)::float8 AS age FROM sessions WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
    return row ? row.age : null;
  }

  /**
   * The account row, locked for the rest of the transaction: MFA verifications of one account
   * run one at a time, and always lock the account before its challenges.
   */
  lockUser(id: string): Promise<UserAuthRow | null> {
    return this.db.one<UserAuthRow>(
      `SELECT id, email, name, password_hash, status, totp_secret, totp_pending_secret FROM users WHERE id = $1 FOR UPDATE`,
      [id],
    );
  }

  /** Stores a new challenge (hashed) and drops the account's challenges older than a day. */
  async insertMfaChallenge(userId: string, hash: string, ttlSeconds: number): Promise<void> {
    await this.db.exec(`DELETE FROM mfa_challenges WHERE user_id = $1 AND created_at < now() - interval '1 day'`, [userId]);
    await this.db.exec(
      `INSERT INTO mfa_challenges (user_id, token_hash, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
      [userId, hash, ttlSeconds],
    );
  }

  async mfaChallengeOwner(hash: string): Promise<string | null> {
    return (await this.db.one<{ user_id: string }>(`SELECT user_id FROM mfa_challenges WHERE token_hash = $1`, [hash]))?.user_id ?? null;
  }

  /** The challenge, locked; `open` when it is unexpired, unconsumed and has attempts left. */
  lockMfaChallenge(hash: string, maxAttempts: number): Promise<{ id: string; user_id: string; open: boolean } | null> {
    return this.db.one(
      `SELECT id, user_id, (consumed_at IS NULL AND expires_at > now() AND attempts < $2) AS open
         FROM mfa_challenges WHERE token_hash = $1 FOR UPDATE`,
      [hash, maxAttempts],
    );
  }

  /**
   * Wrong codes on the account's challenges issued within the window, and the seconds until the
   * oldest of those challenges leaves it.
   */
  async recentWrongMfaCodes(userId: string, windowSeconds: number): Promise<{ wrong: number; retryAfterSeconds: number }> {
    const row = await this.db.one<{ wrong: number; retry_after: number | null }>(
      `SELECT coalesce(sum(attempts), 0)::int AS wrong,
              ceil(extract(epoch FROM min(created_at) FILTER (WHERE attempts > 0) + make_interval(secs => $2) - now()))::int AS retry_after
         FROM mfa_challenges WHERE user_id = $1 AND created_at > now() - make_interval(secs => $2)`,
      [userId, windowSeconds],
    );
    return { wrong: row?.wrong ?? 0, retryAfterSeconds: Math.max(1, row?.retry_after ?? windowSeconds) };
  }

  /** Spends one attempt of an open challenge; the attempts now spent (null when none was left). */
  async recordWrongMfaCode(challengeId: string, maxAttempts: number): Promise<number | null> {
    const row = await this.db.one<{ attempts: number }>(
      `UPDATE mfa_challenges SET attempts = attempts + 1 WHERE id = $1 AND consumed_at IS NULL AND attempts < $2 RETURNING attempts`,
      [challengeId, maxAttempts],
    );
    return row?.attempts ?? null;
  }

  /** Compare-and-set: true for the one caller that consumes an open challenge. */
  async consumeMfaChallenge(challengeId: string, maxAttempts: number): Promise<boolean> {
    return (await this.db.exec(
      `UPDATE mfa_challenges SET consumed_at = now() WHERE id = $1 AND consumed_at IS NULL AND expires_at > now() AND attempts < $2`,
      [challengeId, maxAttempts],
    )) === 1;
  }

  /**
   * Ends every live session a provider minted, with its refresh tokens (expired now, so a later
   * refresh is simply invalid). System context only: sessions are visible to their own user
   * otherwise. Returns the ended sessions.
   */
  endSessionsMintedBy(providerId: string, reason: string): Promise<{ id: string; user_id: string }[]> {
    return this.db.rows<{ id: string; user_id: string }>(
      `WITH ended AS (
         UPDATE sessions SET revoked_at = now(), revoked_reason = $2
          WHERE sso_provider_id = $1 AND revoked_at IS NULL AND expires_at > now()
         RETURNING id, user_id
       ), spent AS (
         UPDATE refresh_tokens SET expires_at = least(expires_at, now())
          WHERE session_id IN (SELECT id FROM ended) AND used_at IS NULL
       )
       SELECT id, user_id FROM ended`,
      [providerId, reason],
    );
  }

  /** Ends the given live sessions and expires their unused refresh tokens, in the caller's transaction. */
  endSessions(sessionIds: string[], reason: string): Promise<{ id: string; user_id: string }[]> {
    return this.db.rows<{ id: string; user_id: string }>(
      `WITH ended AS (
         UPDATE sessions SET revoked_at = now(), revoked_reason = $2
          WHERE id = ANY ($1::uuid[]) AND revoked_at IS NULL
         RETURNING id, user_id
       ), spent AS (
         UPDATE refresh_tokens SET expires_at = least(expires_at, now())
          WHERE session_id = ANY ($1::uuid[]) AND used_at IS NULL
       )
       SELECT id, user_id FROM ended`,
      [sessionIds, reason],
    );
  }

  /** Ends the account's MFA challenges (they were issued against a password that changed). */
  async deleteMfaChallenges(userId: string): Promise<void> {
    await this.db.exec(`DELETE FROM mfa_challenges WHERE user_id = $1`, [userId]);
  }

  /**
   * Issues the account's one open reset token: a newer link replaces the hash of an older unused
   * one in place (the database allows one unused token per account), so the older link stops working.
   */
  async issueResetToken(userId: string, hash: string, ttlSeconds: number): Promise<void> {
    await this.db.exec(
      `INSERT INTO password_reset_tokens (user_id, token_hash, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
       ON CONFLICT (user_id) WHERE used_at IS NULL
       DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = now(), expires_at = EXCLUDED.expires_at`,
      [userId, hash, ttlSeconds],
    );
  }

  /** Retires every unused reset token of the account (after a password change or a reset). */
  async retireResetTokens(userId: string): Promise<void> {
    await this.db.exec(`UPDATE password_reset_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [userId]);
  }

  consumeResetToken(hash: string): Promise<{ user_id: string } | null> {
    return this.db.one(
      `UPDATE password_reset_tokens SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
      [hash],
    );
  }
}
