import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { SessionService } from '../../auth/session.service';
import type { VerifiedOidcLogin } from './oidc-relying-party.service';
import type { LoginProviderRow } from './sso-login.repository';
import { SsoSignOutRepository } from './sso-sign-out.repository';

/** SecretBoxService context of the ID token kept for a session's `id_token_hint`. */
export const idTokenContext = (sessionId: string) => `sso_session_links.id_token:${sessionId}`;

/** A session an SSO sign-in just opened, in its final transaction (its exchange code not yet handed out). */
export interface SignedInSession {
  sessionId: string;
  orgId: string | null;
  partnerId: string | null;
}

/**
 * The record of SSO sessions an identity provider can later name (issue 16): at each sign-in,
 * what the IdP calls the session (the OIDC subject, `sid` and sealed ID token; the SAML NameID
 * and SessionIndex); swept once the session expired, and dropped with the sessions that end.
 */
@Injectable()
export class SsoSessionLinkService {
  constructor(
    private readonly repo: SsoSignOutRepository,
    private readonly box: SecretBoxService,
    private readonly sessions: SessionService,
  ) {}

  /**
   * In an OIDC sign-in's final transaction, after the mint, so the session commits with it and
   * before the browser gets its exchange code: the session's subject, the OP's `sid` and the ID
   * token (sealed). The session is unusable until the code is
   * redeemed, so no window exists in which it could escape a back-channel logout.
   */
  async recordOidcSignIn(session: SignedInSession, provider: LoginProviderRow, login: VerifiedOidcLogin): Promise<void> {
    const sid = typeof login.idTokenClaims.sid === 'string' && login.idTokenClaims.sid !== '' && login.idTokenClaims.sid.length <= 255 ? login.idTokenClaims.sid : null;
    await this.record(session, provider.id, {
      protocol: 'oidc',
      subject: login.sub,
      idpSessionId: sid,
      nameIdFormat: null,
      idTokenSealed: this.box.encrypt(login.idToken, idTokenContext(session.sessionId)),
    });
  }

  /** A bounded sweep of the links of sessions that expired (the periodic clean-up, in the caller's system context). */
  sweepExpiredLinks(): Promise<void> {
    return this.repo.sweepExpiredLinks();
  }

  /** The SAML counterpart: the NameID (and format) and SessionIndex a LogoutRequest will name. */
  async recordSamlSignIn(session: SignedInSession, providerId: string, nameId: string, nameIdFormat: string | null, sessionIndex: string | null): Promise<void> {
    await this.record(session, providerId, {
      protocol: 'saml',
      subject: nameId,
      idpSessionId: sessionIndex && sessionIndex.length <= 255 ? sessionIndex : null,
      nameIdFormat: nameIdFormat && nameIdFormat.length <= 255 ? nameIdFormat : null,
      idTokenSealed: null,
    });
  }

  /** In the sign-in's own system-context transaction (SignInPipelineService). */
  private async record(
    session: SignedInSession,
    providerId: string,
    fields: { protocol: 'oidc' | 'saml'; subject: string; idpSessionId: string | null; nameIdFormat: string | null; idTokenSealed: string | null },
  ): Promise<void> {
    await this.repo.insertLink({ sessionId: session.sessionId, orgId: session.orgId, partnerId: session.partnerId, providerId, ...fields });
  }

  /** Ends the sessions through the auth module (their owner) and drops what sign-in kept for them. */
  async endSessions(sessionIds: string[], reason: string): Promise<{ id: string; user_id: string }[]> {
    const ended = await this.sessions.end(sessionIds, reason);
    await this.repo.dropSignInState(sessionIds);
    return ended;
  }
}
