import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

export interface SessionLinkRow {
  session_id: string;
  org_id: string | null;
  partner_id: string | null;
  provider_id: string;
  protocol: 'oidc' | 'saml';
  subject: string;
  idp_session_id: string | null;
  name_id_format: string | null;
  id_token: string | null;
}

export interface NewSessionLink {
  sessionId: string;
  orgId: string | null;
  partnerId: string | null;
  providerId: string;
  protocol: 'oidc' | 'saml';
  subject: string;
  idpSessionId: string | null;
  nameIdFormat: string | null;
  /** Sealed with SecretBoxService; OIDC only. */
  idTokenSealed: string | null;
}

/** Whose sessions an identity provider's sign-out names: its session id, its subject, or both. */
export interface IdpSessionSelector {
  providerId: string;
  subject: string | null;
  idpSessionId: string | null;
}

const LINK_COLUMNS = 'session_id, org_id, partner_id, provider_id, protocol, subject, idp_session_id, name_id_format, id_token';

/**
 * The sign-out tables (sso_session_links, sso_logout_tokens_seen) and the ending of sessions
 * they name. Every method runs in the caller's system-context transaction (the tables admit
 * no other).
 */
@Injectable()
export class SsoSignOutRepository {
  constructor(private readonly db: DbService) {}

  async insertLink(l: NewSessionLink): Promise<void> {
    await this.db.exec(
      `INSERT INTO sso_session_links (session_id, org_id, partner_id, provider_id, protocol, subject, idp_session_id, name_id_format, id_token, expires_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, s.expires_at FROM sessions s WHERE s.id = $1`,
      [l.sessionId, l.orgId, l.partnerId, l.providerId, l.protocol, l.subject, l.idpSessionId, l.nameIdFormat, l.idTokenSealed],
    );
  }

  /** Removes a bounded batch of links whose sessions expired (sessions that were never signed out). */
  async sweepExpiredLinks(): Promise<void> {
    await this.db.exec(`DELETE FROM sso_session_links WHERE session_id IN (SELECT session_id FROM sso_session_links WHERE expires_at < now() LIMIT 100)`);
  }

  linkOfSession(sessionId: string): Promise<SessionLinkRow | null> {
    return this.db.one<SessionLinkRow>(`SELECT ${LINK_COLUMNS} FROM sso_session_links WHERE session_id = $1`, [sessionId]);
  }

  /**
   * Records a logout token's jti; false when the provider already sent it (a replay). The
   * table keeps each jti until its token expires.
   */
  async rememberLogoutToken(t: { orgId: string | null; partnerId: string | null; providerId: string; jti: string; expiresAt: Date }): Promise<boolean> {
    await this.db.exec(`DELETE FROM sso_logout_tokens_seen WHERE id IN (SELECT id FROM sso_logout_tokens_seen WHERE expires_at < now() LIMIT 100)`);
    const row = await this.db.one(
      `INSERT INTO sso_logout_tokens_seen (org_id, partner_id, provider_id, jti, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (provider_id, jti) DO NOTHING RETURNING id`,
      [t.orgId, t.partnerId, t.providerId, t.jti, t.expiresAt],
    );
    return row !== null;
  }

  /** The live sessions an identity provider's sign-out names: by its session id (and subject when both are given), else by subject. */
  async sessionsNamed(s: IdpSessionSelector): Promise<string[]> {
    const rows = await this.db.rows<{ session_id: string }>(
      `SELECT l.session_id FROM sso_session_links l JOIN sessions x ON x.id = l.session_id AND x.revoked_at IS NULL
        WHERE l.provider_id = $1
          AND CASE WHEN $3::text IS NOT NULL THEN l.idp_session_id = $3 AND ($2::text IS NULL OR l.subject = $2) ELSE l.subject = $2 END`,
      [s.providerId, s.subject, s.idpSessionId],
    );
    return rows.map((r) => r.session_id);
  }

  /** What sign-in left for the ended sessions: their unredeemed exchange codes and their links to an IdP session. */
  async dropSignInState(sessionIds: string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    await this.db.exec(
      `WITH unredeemed AS (DELETE FROM sso_exchange_codes WHERE session_id = ANY ($1::uuid[]))
       DELETE FROM sso_session_links WHERE session_id = ANY ($1::uuid[])`,
      [sessionIds],
    );
  }
}
