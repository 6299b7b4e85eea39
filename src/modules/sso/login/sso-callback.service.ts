import { Injectable, Logger } from '@nestjs/common';
import { TenantTransaction } from '../../../infra/database/tenant-transaction.service';
import { SecretBox } from '../../../infra/crypto/secret-box.service';
import { IdentityLinker } from '../linking/identity-linker.service';
import { AccountResolver, VerifiedSignIn } from './account-resolver.service';
import { LoginAudit } from './login-audit.service';
import { amrIncludesMfa, domainAllowed, mapIdentity, profileClaims, sourcedEmailVerification } from './oidc-claims.util';
import { OidcClientConfig, OidcProtocolError, OidcRelyingParty } from './oidc-relying-party.service';
import { OidcLoginStarter } from './oidc-login-starter.service';
import { signedInLocation } from './redirect-path.util';
import { asLinkRejection, LinkRejection, LoginRejection } from './sso-login.errors';
import { LoginProviderRow, LoginSessionRow, SsoLoginRepository } from './sso-login.repository';
import { SsoSignOutService } from './sso-sign-out.service';
import { isWellFormedState, stateMatchesCookie } from './state-cookie.util';

export interface CallbackQuery {
  code?: unknown;
  state?: unknown;
  error?: unknown;
  /** RFC 9207: the issuer of the authorization response. */
  iss?: unknown;
}

export interface CallbackResult {
  /** A path on this origin; never carries IdP, library or database text. */
  location: string;
  /** Whether the state cookie has served its purpose (its login session was consumed). */
  clearStateCookie: boolean;
}

const MAX_CODE_LENGTH = 2048;
const OAUTH_ERROR = /^[a-z_]{1,40}$/;

export const loginFailureLocation = (code: LoginRejection['code']) => `/login?error=${code}`;
export const linkFailureLocation = (code: LinkRejection['code']) => `/settings/profile?ssoLinkError=${code}`;
export const LINK_SUCCESS_LOCATION = '/settings/profile?ssoLinked=1';

type Opened = { session: LoginSessionRow; provider: LoginProviderRow; client: OidcClientConfig; code: string };
type Refusal = { rejection: LoginRejection; purpose: 'login' | 'link' };

function failureLocation(rejection: LoginRejection, purpose: 'login' | 'link'): string {
  return purpose === 'link' ? linkFailureLocation(asLinkRejection(rejection).code) : loginFailureLocation(rejection.code);
}

/**
 * GET /sso/callback, in the order of spec 1.1.7–15: the browser binding first (a mismatch
 * leaves the login session untouched), then the atomic consume and the provider checks in a
 * short transaction, the IdP round trip with no transaction open, the claim safeguards, and
 * the final transaction of the login (AccountResolver) or link (IdentityLinker). Every
 * refusal becomes a redirect with a contract code and an audit row with the precise reason.
 */
@Injectable()
export class SsoCallbackService {
  private readonly logger = new Logger(SsoCallbackService.name);

  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly tx: TenantTransaction,
    private readonly box: SecretBox,
    private readonly rp: OidcRelyingParty,
    private readonly starter: OidcLoginStarter,
    private readonly accounts: AccountResolver,
    private readonly linker: IdentityLinker,
    private readonly loginAudit: LoginAudit,
    private readonly signOut: SsoSignOutService,
  ) {}

  async handle(query: CallbackQuery, stateCookie: unknown): Promise<CallbackResult> {
    let session: LoginSessionRow | null = null;
    try {
      if (!stateMatchesCookie(this.box, query.state, stateCookie)) return await this.refuseUnbound(query.state, stateCookie);
      const opened = await this.open(query);
      if ('rejection' in opened) return { location: failureLocation(opened.rejection, opened.purpose), clearStateCookie: true };
      session = opened.session;
      return { location: await this.finish(opened), clearStateCookie: true };
    } catch (error) {
      // Whatever failed, the browser gets the generic code and nothing of the error.
      this.logger.error({ err: error }, 'SSO callback failed');
      const rejection = new LoginRejection('sso_error', 'internal_error');
      const purpose = session?.purpose ?? 'login';
      await this.loginAudit
        .rejectedApart(rejection, session && { orgId: session.org_id, partnerId: session.partner_id, providerId: session.provider_id }, purpose)
        .catch((auditError: Error) => this.logger.error({ err: auditError }, 'Could not audit a failed SSO callback'));
      return { location: failureLocation(rejection, purpose), clearStateCookie: true };
    }
  }

  /** Spec 1.1.7: a callback from another browser (no or another cookie). The login session stays usable. */
  private async refuseUnbound(state: unknown, cookie: unknown): Promise<CallbackResult> {
    const reason = !isWellFormedState(state) ? 'state_parameter_invalid' : typeof cookie !== 'string' ? 'state_cookie_missing' : 'state_cookie_mismatch';
    await this.tx.withSystemContext('a refused callback is attributed to the tenant its state names', async () => {
      const named = isWellFormedState(state) ? await this.repo.peekLoginSession(state) : null;
      const tenant = named ? { orgId: named.org_id, partnerId: named.partner_id, providerId: named.provider_id } : null;
      await this.loginAudit.rejected(new LoginRejection('invalid_callback', reason), tenant, named?.purpose ?? 'login');
    });
    return { location: loginFailureLocation('invalid_callback'), clearStateCookie: false };
  }

  /** Consumes the login session and checks the provider it was started under, in one short transaction. */
  private open(query: CallbackQuery): Promise<Opened | Refusal> {
    const state = query.state as string;
    return this.tx.withSystemContext('the callback consumes the login session its state names', async () => {
      const session = await this.repo.consumeLoginSession(state);
      if (!session) {
        const expired = await this.repo.discardExpiredLoginSession(state);
        const rejection = new LoginRejection('session_expired', expired ? 'state_expired' : 'state_unknown_or_already_used');
        const tenant = expired ? { orgId: expired.org_id, partnerId: expired.partner_id, providerId: expired.provider_id } : null;
        await this.loginAudit.rejected(rejection, tenant, expired?.purpose ?? 'login');
        // An expired link attempt is still reported at the login page: the user retries from the start.
        return { rejection, purpose: 'login' as const };
      }
      const provider = await this.repo.provider(session.provider_id);
      const checked = this.checkOpened(session, provider, query);
      if (checked instanceof LoginRejection) {
        await this.loginAudit.rejected(checked, { orgId: session.org_id, partnerId: session.partner_id, providerId: session.provider_id }, session.purpose);
        return { rejection: checked, purpose: session.purpose };
      }
      return checked;
    });
  }

  private checkOpened(session: LoginSessionRow, provider: LoginProviderRow | null, query: CallbackQuery): Opened | LoginRejection {
    if (!provider) return new LoginRejection('sso_provider_inactive', 'provider_deleted');
    // RFC 9207 §2.4, before anything of the response is read: an answer from another provider (mix-up) is refused.
    if (session.iss_required) {
      if (query.iss === undefined) return new LoginRejection('sso_error', 'iss_parameter_missing');
      if (typeof query.iss !== 'string' || query.iss !== provider.issuer) return new LoginRejection('sso_error', 'iss_parameter_mismatch');
    }
    if (provider.status !== 'active') return new LoginRejection('sso_provider_inactive', `provider_${provider.status}`);
    if (provider.generation !== session.generation) return new LoginRejection('sso_config_changed', 'provider_reconfigured_since_login_start');
    const client = this.starter.clientConfig(provider);
    if ('missing' in client) return new LoginRejection('invalid_provider_configuration', 'provider_incomplete');
    if (query.error !== undefined) {
      const error = typeof query.error === 'string' && OAUTH_ERROR.test(query.error) ? query.error : 'unrecognised';
      return new LoginRejection('sso_error', `idp_returned_error_${error}`);
    }
    if (typeof query.code !== 'string' || query.code === '' || query.code.length > MAX_CODE_LENGTH) return new LoginRejection('sso_error', 'authorization_code_missing');
    return { session, provider, client: client.config, code: query.code };
  }

  private async finish({ session, provider, client, code }: Opened): Promise<string> {
    const verified = await this.verify(session, provider, client, code);
    if (verified instanceof LoginRejection) {
      await this.loginAudit.rejectedApart(verified, { orgId: session.org_id, partnerId: session.partner_id, providerId: session.provider_id }, session.purpose);
      return failureLocation(verified, session.purpose);
    }
    if (session.purpose === 'link') {
      const linked = await this.linker.attach(verified);
      return linked === 'linked' ? LINK_SUCCESS_LOCATION : linkFailureLocation(linked.code);
    }
    const signedIn = await this.accounts.signIn(verified);
    if (signedIn instanceof LoginRejection) return loginFailureLocation(signedIn.code);
    await this.signOut.recordOidcSignIn(signedIn.exchangeCode, provider, verified.login);
    return signedInLocation(session.redirect_url, signedIn.exchangeCode);
  }

  /** The IdP round trip (no transaction open) and the claim safeguards that need no database. */
  private async verify(session: LoginSessionRow, provider: LoginProviderRow, client: OidcClientConfig, code: string): Promise<VerifiedSignIn | LoginRejection> {
    let login;
    try {
      login = await this.rp.completeLogin(client, { code, codeVerifier: session.code_verifier, nonce: session.nonce, redirectUri: this.starter.redirectUri });
    } catch (error) {
      if (error instanceof OidcProtocolError) return new LoginRejection('sso_error', error.reason);
      throw error;
    }
    const profile = profileClaims(login.idTokenClaims, login.userInfo);
    const verification = sourcedEmailVerification(login.idTokenClaims, login.userInfo, provider.attribute_mapping.email);
    const identity = mapIdentity(profile, provider.attribute_mapping, verification);
    if (typeof identity === 'string') return new LoginRejection('sso_error', identity);
    if (identity.emailVerification === 'unverified') return new LoginRejection('sso_email_unverified', 'idp_reports_email_unverified');
    if (!domainAllowed(provider.allowed_domains, identity.domain)) return new LoginRejection('domain_not_allowed', 'email_domain_not_in_allowed_domains');
    return { session, login, identity, profile, idpMfa: amrIncludesMfa(login.idTokenClaims) };
  }
}
