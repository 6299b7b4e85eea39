import { SessionService } from '../../auth/session.service';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { SecretBoxService, SecretDecryptionError } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { PrincipalResolverService } from '../../auth/principal-resolver.service';
import { SafeFetchError } from '../../../infra/net/net.errors';
import type { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import { ownerOf } from './login-provider.util';
import { OidcLoginStarterService } from './oidc-login-starter.service';
import { OidcProviderMetadataService } from './oidc-provider-metadata.service';
import { OIDC_HTTP, OidcProtocolError, OidcRelyingPartyService, VerifiedOidcLogin } from './oidc-relying-party.service';
import { safeRedirectPath } from './redirect-path.util';
import { SsoLoginErrors } from './sso-login.errors';
import { LoginProviderRow, SsoLoginRepository } from './sso-login.repository';
import { IdpSessionSelector, SessionLinkRow, SsoSignOutRepository } from './sso-sign-out.repository';

/** Where the OP returns the browser after an RP-initiated logout: one fixed path, registered at each provider. */
export const POST_LOGOUT_PATH = '/api/v1/sso/logout/callback';
/** Longest logout token read (a signed JWT; real ones are well under 2 KB). */
export const MAX_LOGOUT_TOKEN_LENGTH = 16_384;

/** SecretBoxService context of the ID token kept for a session's `id_token_hint`. */
const idTokenContext = (sessionId: string) => `sso_session_links.id_token:${sessionId}`;

/** A session an SSO sign-in just opened, in its final transaction (its exchange code not yet handed out). */
export interface SignedInSession {
  sessionId: string;
  orgId: string | null;
  partnerId: string | null;
}

/**
 * Builds the IdP sign-out URL of a SAML session (SP-initiated Single Logout); provided by the
 * SAML module, which depends on this one.
 */
export interface SamlLogoutStarter {
  logoutUrl(link: SessionLinkRow, returnPath: string): Promise<string | null>;
}

export interface LogoutStarted {
  success: true;
  /** Where the browser goes next: the identity provider's sign-out, or a path on this origin. */
  logoutUrl: string;
}

/**
 * Sign-out that reaches every session (issue 16): records, at each SSO sign-in, what the IdP will
 * name the session by; ends the caller's session and sends the browser to the IdP's sign-out
 * (RP-initiated logout with `id_token_hint`); and ends the sessions an IdP's back-channel logout
 * token names. Sessions end in one statement with their refresh tokens and unredeemed exchange
 * codes, and leave this instance's principal cache at once (other instances within its TTL).
 */
@Injectable()
export class SsoSignOutService {
  private readonly logger = new Logger(SsoSignOutService.name);
  private samlStarter: SamlLogoutStarter | null = null;

  constructor(
    private readonly repo: SsoSignOutRepository,
    private readonly loginRepo: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
    private readonly box: SecretBoxService,
    private readonly rp: OidcRelyingPartyService,
    private readonly starter: OidcLoginStarterService,
    private readonly metadata: OidcProviderMetadataService,
    private readonly principals: PrincipalResolverService,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    @Inject(OIDC_HTTP) private readonly http: SafeFetchService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The SAML module registers its Single Logout here (it imports this module, not the reverse). */
  useSamlLogout(starter: SamlLogoutStarter): void {
    this.samlStarter = starter;
  }

  get postLogoutRedirectUri(): string {
    return `${this.config.publicUrl}${POST_LOGOUT_PATH}`;
  }

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

  /**
   * Ends the caller's session and answers where the browser goes next: for a session an OIDC
   * provider with an `end_session_endpoint` opened, that endpoint with `id_token_hint`,
   * `post_logout_redirect_uri` (our fixed path) and `state` (the return path); for a SAML session
   * of a provider with a Single Logout service, a signed LogoutRequest; otherwise the return path.
   */
  async logout(principal: Principal, redirect: unknown): Promise<LogoutStarted> {
    if (!principal.sessionId) throw SsoLoginErrors.logoutNeedsUserSession();
    const sessionId = principal.sessionId;
    const returnPath = safeRedirectPath(redirect ?? '/login');
    const link = await this.tx.withSystemContext('a user ends their own session', async () => {
      const found = await this.repo.linkOfSession(sessionId);
      const provider = found ? await this.loginRepo.provider(found.provider_id) : null;
      // By id: a session no identity provider opened (a password sign-in) ends here too.
      await this.endSessions([sessionId], 'logout');
      await this.audit.record({
        action: 'sso.logout',
        orgId: principal.scope === 'partner' ? null : principal.orgId,
        partnerId: principal.scope === 'partner' ? principal.partnerId : null,
        resourceType: 'session',
        resourceId: sessionId,
        details: { initiatedBy: 'user', providerId: found?.provider_id ?? null },
      });
      return found && provider ? { found, provider } : null;
    });
    this.principals.forgetSession(sessionId);
    if (!link) return { success: true, logoutUrl: returnPath };
    const url = link.found.protocol === 'oidc' ? await this.oidcLogoutUrl(link.found, link.provider, returnPath) : await this.samlStarter?.logoutUrl(link.found, returnPath);
    return { success: true, logoutUrl: url ?? returnPath };
  }

  private async oidcLogoutUrl(link: SessionLinkRow, provider: LoginProviderRow, returnPath: string): Promise<string | null> {
    const client = this.starter.clientConfig(provider);
    if ('missing' in client || !link.id_token) return null;
    const { endSessionUrl } = await this.metadata.of(client.config.issuer);
    if (!endSessionUrl) return null;
    try {
      await this.http.assertSafeUrl(endSessionUrl);
    } catch (error) {
      if (!(error instanceof SafeFetchError)) throw error;
      this.logger.warn({ providerId: provider.id, reason: error.reason }, 'An end-session endpoint is not acceptable; the browser stays here');
      return null;
    }
    let idToken: string;
    try {
      idToken = this.box.decrypt(link.id_token, idTokenContext(link.session_id));
    } catch (error) {
      if (error instanceof SecretDecryptionError) return null;
      throw error;
    }
    const url = new URL(endSessionUrl);
    url.searchParams.set('id_token_hint', idToken);
    url.searchParams.set('client_id', client.config.clientId);
    url.searchParams.set('post_logout_redirect_uri', this.postLogoutRedirectUri);
    url.searchParams.set('state', returnPath);
    return url.toString();
  }

  /** Where the OP returned the browser: the `state` it carried, read again as a same-origin path. */
  returnLocation(state: unknown): string {
    return safeRedirectPath(state ?? '/login');
  }

  /**
   * OpenID Connect Back-Channel Logout 1.0: the logout token verified (OidcRelyingPartyService), its jti
   * recorded (a replay is refused), then every live session it names at this provider ends. A
   * token that names no live session is accepted (the spec's answer to "already signed out").
   * Refusals are 400 `invalid_logout_token`, audited with the precise reason.
   */
  async backchannel(providerId: string, logoutToken: unknown): Promise<{ success: true }> {
    const provider = await this.tx.withSystemContext('a back-channel logout names its provider', () => this.loginRepo.provider(providerId));
    if (!provider || provider.type !== 'oidc') throw SsoLoginErrors.logoutProviderNotFound();
    const tenant = ownerOf(provider);
    if (typeof logoutToken !== 'string' || logoutToken === '' || logoutToken.length > MAX_LOGOUT_TOKEN_LENGTH) return this.refuse(provider, 'logout_token_missing');
    const client = this.starter.clientConfig(provider);
    if ('missing' in client) return this.refuse(provider, 'provider_incomplete');
    let verified;
    try {
      verified = await this.rp.verifyLogoutToken(client.config, logoutToken);
    } catch (error) {
      if (error instanceof OidcProtocolError) return this.refuse(provider, error.reason);
      throw error;
    }
    const selector: IdpSessionSelector = { providerId, subject: verified.sub, idpSessionId: verified.sid };
    const outcome = await this.tx.withSystemContext('a back-channel logout ends the sessions its token names', async () => {
      if (!(await this.repo.rememberLogoutToken({ ...tenant, providerId, jti: verified.jti, expiresAt: verified.expiresAt }))) return 'replayed' as const;
      const ended = await this.endSessions(await this.repo.sessionsNamed(selector), 'sso_backchannel_logout');
      await this.audit.record({
        action: 'sso.logout.backchannel',
        ...tenant,
        resourceType: 'sso_provider',
        resourceId: providerId,
        actor: { type: 'system', id: null },
        details: { by: verified.sid ? 'sid' : 'sub', sessionsEnded: ended.length },
      });
      return ended;
    });
    if (outcome === 'replayed') return this.refuse(provider, 'logout_token_replayed');
    for (const session of outcome) this.principals.forgetSession(session.id);
    return { success: true };
  }

  /**
   * Ends the sessions an IdP-initiated SAML LogoutRequest names (validated by the caller), in
   * one system-context transaction. Returns how many were live.
   */
  async endNamedSessions(selector: IdpSessionSelector, tenant: { orgId: string | null; partnerId: string | null }, reason: string): Promise<number> {
    const ended = await this.tx.withSystemContext('an identity provider signs a person out', async () => {
      const sessions = await this.endSessions(await this.repo.sessionsNamed(selector), reason);
      await this.audit.record({
        action: 'sso.logout.idp',
        ...tenant,
        resourceType: 'sso_provider',
        resourceId: selector.providerId,
        actor: { type: 'system', id: null },
        details: { by: selector.idpSessionId ? 'session_index' : 'name_id', sessionsEnded: sessions.length },
      });
      return sessions;
    });
    for (const session of ended) this.principals.forgetSession(session.id);
    return ended.length;
  }

  private async refuse(provider: LoginProviderRow, reason: string): Promise<never> {
    await this.tx.withSystemContext('audit of a refused back-channel logout', () =>
      this.audit.record({
        action: 'sso.logout.rejected',
        ...ownerOf(provider),
        resourceType: 'sso_provider',
        resourceId: provider.id,
        actor: { type: 'system', id: null },
        details: { reason },
      }),
    );
    throw SsoLoginErrors.invalidLogoutToken();
  }

  /** Ends the sessions through the auth module (their owner) and drops what sign-in kept for them. */
  private async endSessions(sessionIds: string[], reason: string): Promise<{ id: string; user_id: string }[]> {
    const ended = await this.sessions.end(sessionIds, reason);
    await this.repo.dropSignInState(sessionIds);
    return ended;
  }
}
