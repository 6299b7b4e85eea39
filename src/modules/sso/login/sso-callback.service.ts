import { Injectable } from '@nestjs/common';
import type { VerifiedSignIn } from './account-resolver.service';
import { amrIncludesMfa, domainAllowed, mapIdentity, profileClaims, sourcedEmailVerification } from './oidc-claims.util';
import { OidcClientConfig, OidcProtocolError, OidcRelyingPartyService, VerifiedOidcLogin } from './oidc-relying-party.service';
import { OidcLoginStarterService } from './oidc-login-starter.service';
import { LoginRejection } from './sso-login.errors';
import { LoginProviderRow, LoginSessionRow } from './sso-login.repository';
import { SsoSessionLinkService } from './sso-session-link.service';
import { MintedSignIn, OpenedSignIn, SignInPipelineService, SignInProtocol, SignInResult, SignInTraits } from '../sign-in/sign-in-pipeline.service';

export interface CallbackQuery {
  code?: unknown;
  state?: unknown;
  error?: unknown;
  /** RFC 9207: the issuer of the authorization response. */
  iss?: unknown;
}

const MAX_CODE_LENGTH = 2048;
const OAUTH_ERROR = /^[a-z_]{1,40}$/;

type OidcOpened = { client: OidcClientConfig; code: string };

/**
 * GET /sso/callback: the OIDC adapter of the sign-in pipeline (SignInPipelineService, which
 * binds the browser, consumes the login session and resolves the account). Its own steps:
 * RFC 9207 `iss` before anything of the response is read, the client configuration and the
 * authorization code, then the code exchange and ID-token checks with the IdP (no transaction
 * open) and the claim safeguards. Login and self-service linking round trips both end here.
 */
@Injectable()
export class SsoCallbackService implements SignInProtocol<CallbackQuery, OidcOpened, VerifiedOidcLogin> {
  constructor(
    private readonly pipeline: SignInPipelineService,
    private readonly rp: OidcRelyingPartyService,
    private readonly starter: OidcLoginStarterService,
    private readonly sessionLinks: SsoSessionLinkService,
  ) {}

  readonly traits: SignInTraits = { protocol: 'oidc', malformedStateReason: 'state_parameter_invalid', failureMessage: 'SSO callback failed', linking: true };

  handle(query: CallbackQuery, stateCookie: unknown): Promise<SignInResult> {
    return this.pipeline.complete(this, query.state, query, stateCookie);
  }

  /**
   * RFC 9207 §2.4, before anything of the response is read: an answer from another provider (mix-up) is refused.
   * An `iss` that is present is compared whether or not the provider advertises the parameter, so an attacker
   * relaying another IdP's answer cannot count on the provider's discovery document leaving it out.
   */
  async precheck(session: LoginSessionRow, provider: LoginProviderRow, query: CallbackQuery): Promise<void> {
    if (query.iss === undefined) {
      if (session.iss_required) throw new LoginRejection('sso_error', 'iss_parameter_missing');
      return;
    }
    if (typeof query.iss !== 'string' || query.iss !== provider.issuer) throw new LoginRejection('sso_error', 'iss_parameter_mismatch');
  }

  async configure(_session: LoginSessionRow, provider: LoginProviderRow, query: CallbackQuery): Promise<OidcOpened> {
    const client = this.starter.clientConfig(provider);
    if ('missing' in client) throw new LoginRejection('invalid_provider_configuration', 'provider_incomplete');
    if (query.error !== undefined) {
      const error = typeof query.error === 'string' && OAUTH_ERROR.test(query.error) ? query.error : 'unrecognised';
      throw new LoginRejection('sso_error', `idp_returned_error_${error}`);
    }
    if (typeof query.code !== 'string' || query.code === '' || query.code.length > MAX_CODE_LENGTH) throw new LoginRejection('sso_error', 'authorization_code_missing');
    return { client: client.config, code: query.code };
  }

  /** The IdP round trip (no transaction open) and the claim safeguards that need no database. */
  async verify({ session, provider, protocol: { client, code } }: OpenedSignIn<OidcOpened>): Promise<VerifiedSignIn<VerifiedOidcLogin>> {
    let login;
    try {
      login = await this.rp.completeLogin(client, { code, codeVerifier: session.code_verifier, nonce: session.nonce, redirectUri: this.starter.redirectUri });
    } catch (error) {
      if (error instanceof OidcProtocolError) throw new LoginRejection('sso_error', error.reason);
      throw error;
    }
    const profile = profileClaims(login.idTokenClaims, login.userInfo);
    const verification = sourcedEmailVerification(login.idTokenClaims, login.userInfo, provider.attribute_mapping.email);
    const identity = mapIdentity(profile, provider.attribute_mapping, verification);
    if (typeof identity === 'string') throw new LoginRejection('sso_error', identity);
    if (identity.emailVerification === 'unverified') throw new LoginRejection('sso_email_unverified', 'idp_reports_email_unverified');
    if (!domainAllowed(provider.allowed_domains, identity.domain)) throw new LoginRejection('domain_not_allowed', 'email_domain_not_in_allowed_domains');
    return {
      session,
      subject: login.sub,
      identity,
      profile,
      idpMfa: amrIncludesMfa(login.idTokenClaims),
      idpTokens: { accessToken: login.accessToken, refreshToken: login.refreshToken, expiresAt: login.tokenExpiresAt },
      evidence: login,
    };
  }

  recordSession(minted: MintedSignIn, verified: VerifiedSignIn<VerifiedOidcLogin>, opened: OpenedSignIn<OidcOpened>): Promise<void> {
    return this.sessionLinks.recordOidcSignIn(minted, opened.provider, verified.evidence);
  }
}
