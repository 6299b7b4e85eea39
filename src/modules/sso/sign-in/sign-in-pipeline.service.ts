import { Injectable, Logger } from '@nestjs/common';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { MetricsService } from '../../../infra/metrics/metrics.service';
import { AuditEntry, AuditService } from '../../audit/audit.service';
import { Refusal, RefusalService } from '../../audit/refusal.service';
import { SessionService } from '../../auth/session.service';
import { IdentityLinkerService } from '../linking/identity-linker.service';
import { AccountResolverService, VerifiedSignIn } from '../login/account-resolver.service';
import { ownerOf } from '../login/login-provider.util';
import { signedInLocation } from '../login/redirect-path.util';
import { SsoExchangeService } from '../login/sso-exchange.service';
import { asLinkRejection, LinkRejection, LoginRejection } from '../login/sso-login.errors';
import { LoginProviderRow, LoginSessionRow, SsoLoginRepository } from '../login/sso-login.repository';
import { isWellFormedState, stateMatchesCookie } from '../login/state-cookie.util';

export interface SignInResult {
  /** A path on this origin; never carries IdP, library or database text. */
  location: string;
  /** Whether the state cookie has served its purpose (its login session was consumed). */
  clearStateCookie: boolean;
}

/** Whom a sign-in's audit rows are attributed to: the tenant and provider of its login session. */
export interface SignInTenant {
  orgId: string | null;
  partnerId: string | null;
  providerId: string | null;
}

/** A consumed login session whose provider passed the checks, with what the protocol read of it. */
export interface OpenedSignIn<TOpened> {
  session: LoginSessionRow;
  provider: LoginProviderRow;
  tenant: SignInTenant & { providerId: string };
  purpose: 'login' | 'link';
  protocol: TOpened;
}

/** The session a sign-in opened in its final transaction, its exchange code not yet handed to the browser. */
export interface MintedSignIn {
  sessionId: string;
  orgId: string | null;
  partnerId: string | null;
  exchangeCode: string;
}

export interface SignInTraits {
  /** The protocol, as the sign-in metric names it. */
  protocol: 'oidc' | 'saml';
  /** The audit reason of a state (RelayState) that is not even well formed. */
  malformedStateReason: string;
  /** The log line of an unexpected failure. */
  failureMessage: string;
  /** Whether self-service linking round trips end here; otherwise every refusal reads as a sign-in's. */
  linking: boolean;
}

/**
 * What a protocol brings to the pipeline. Each step refuses by throwing a LoginRejection; the
 * pipeline audits it and answers the redirect.
 */
export interface SignInProtocol<TResponse, TOpened, TEvidence = unknown> {
  readonly traits: SignInTraits;
  /** In the consume transaction, on a provider that exists, before its status: whether this response may be read at all. */
  precheck(session: LoginSessionRow, provider: LoginProviderRow, response: TResponse): Promise<void>;
  /** In the consume transaction, on an active provider of the session's generation: its configuration and the response's own preconditions. */
  configure(session: LoginSessionRow, provider: LoginProviderRow, response: TResponse): Promise<TOpened>;
  /** With no transaction open: the protocol's verification of the response and the claim safeguards that need no account. */
  verify(opened: OpenedSignIn<TOpened>, response: TResponse): Promise<VerifiedSignIn<TEvidence>>;
  /** In the sign-in's final transaction, after the mint: what the IdP will name the session by (sign-out). A failure rolls the sign-in back. */
  recordSession(minted: MintedSignIn, verified: VerifiedSignIn<TEvidence>, opened: OpenedSignIn<TOpened>): Promise<void>;
}

const loginFailureLocation = (code: LoginRejection['code']) => `/login?error=${code}`;
const linkFailureLocation = (code: LinkRejection['code']) => `/settings/profile?ssoLinkError=${code}`;
const LINK_SUCCESS_LOCATION = '/settings/profile?ssoLinked=1';

type Rejection = LoginRejection | LinkRejection;

/** The answer of a refused sign-in, thrown once its audit row is recorded. */
class RefusedSignIn extends Error {
  constructor(
    readonly result: SignInResult,
    /** The public code of the refusal (counted by the sign-in metric). */
    readonly code: string,
  ) {
    super(result.location);
  }
}

function signInRejectedEntry(rejection: Rejection, tenant: SignInTenant | null, purpose: 'login' | 'link'): AuditEntry {
  return {
    action: purpose === 'link' ? 'sso.link.rejected' : 'sso.login.rejected',
    orgId: tenant?.orgId ?? null,
    partnerId: tenant?.partnerId ?? null,
    resourceType: 'sso_provider',
    resourceId: tenant?.providerId ?? null,
    actor: { type: 'system', id: null },
    details: { code: purpose === 'link' ? asLinkRejection(rejection).code : rejection.code, reason: rejection.reason },
  };
}

function failureLocation(rejection: Rejection, purpose: 'login' | 'link'): string {
  return purpose === 'link' ? linkFailureLocation(asLinkRejection(rejection).code) : loginFailureLocation((rejection as LoginRejection).code);
}

const tenantOf = (session: Pick<LoginSessionRow, 'org_id' | 'partner_id' | 'provider_id'>) => ({ orgId: session.org_id, partnerId: session.partner_id, providerId: session.provider_id });

/** Where a refusal is audited and where it sends the browser. */
interface Attempt {
  tenant: SignInTenant | null;
  purpose: 'login' | 'link';
  /** The login session was consumed: the state cookie is spent. */
  consumed: boolean;
}

/**
 * The end of every SSO sign-in, OIDC callback and SAML ACS alike (spec 1.1.7–15, 1.10), in one
 * order: bind the browser (the state must be the one its cookie carries; a mismatch leaves the
 * login session untouched) → consume the login session (single use) and check its provider →
 * the protocol verifies the response, with no transaction open → account resolution, mint and the
 * protocol's record of what the IdP will name the session by, in one transaction (or, for a
 * linking round trip, the link) → 302 with `#ssoCode=`. Every refusal is a LoginRejection, audited
 * with its precise reason through RefusalService (after the rollback of what it refused, or with
 * the consumed login session kept) and answered with a redirect carrying only its public code.
 */
@Injectable()
export class SignInPipelineService {
  private readonly logger = new Logger(SignInPipelineService.name);

  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly box: SecretBoxService,
    private readonly refusals: RefusalService,
    private readonly accounts: AccountResolverService,
    private readonly linker: IdentityLinkerService,
    private readonly sessions: SessionService,
    private readonly exchange: SsoExchangeService,
    private readonly audit: AuditService,
    private readonly metrics: MetricsService,
  ) {}

  async complete<TResponse, TOpened, TEvidence>(protocol: SignInProtocol<TResponse, TOpened, TEvidence>, state: unknown, response: TResponse, cookie: unknown): Promise<SignInResult> {
    const attempt: Attempt = { tenant: null, purpose: 'login', consumed: false };
    let opened: OpenedSignIn<TOpened> | null = null;
    try {
      if (!stateMatchesCookie(this.box, state, cookie)) return await this.refuseUnbound(protocol, attempt, state, cookie);
      attempt.consumed = true;
      opened = await this.open(protocol, attempt, state as string, response);
      const location = await this.finish(protocol, attempt, opened, response);
      if (attempt.purpose === 'login') this.metrics.signIn(protocol.traits.protocol, 'success');
      return { location, clearStateCookie: true };
    } catch (error) {
      if (error instanceof RefusedSignIn) {
        if (attempt.purpose === 'login') this.metrics.signIn(protocol.traits.protocol, error.code);
        return error.result;
      }
      // Whatever failed, the browser gets the generic code and nothing of the error; the audit
      // row names the tenant once its login session was opened.
      this.logger.error({ err: error }, protocol.traits.failureMessage);
      const failed: Attempt = opened ? { ...attempt, consumed: true } : { tenant: null, purpose: 'login', consumed: true };
      return this.refusals
        .settle(() => Promise.reject(this.refusal(failed, new LoginRejection('sso_error', 'internal_error'), false)))
        .catch((answer: unknown) => {
          if (failed.purpose === 'login') this.metrics.signIn(protocol.traits.protocol, 'sso_error');
          if (answer instanceof RefusedSignIn) return answer.result;
          this.logger.error({ err: answer }, 'Could not audit a failed sign-in');
          return { location: loginFailureLocation('sso_error'), clearStateCookie: true };
        });
    }
  }

  /** Spec 1.1.7: a response in another browser (no or another cookie). The login session stays usable. */
  private refuseUnbound<R, T>(protocol: SignInProtocol<R, T>, attempt: Attempt, state: unknown, cookie: unknown): Promise<never> {
    const reason = !isWellFormedState(state) ? protocol.traits.malformedStateReason : typeof cookie !== 'string' ? 'state_cookie_missing' : 'state_cookie_mismatch';
    return this.refusals.withSystemContext('a refused sign-in response is attributed to the tenant its state names', async () => {
      const named = isWellFormedState(state) ? await this.repo.peekLoginSession(state) : null;
      if (named) Object.assign(attempt, { tenant: tenantOf(named), purpose: this.purposeOf(protocol, named) });
      throw this.refusal(attempt, new LoginRejection('invalid_callback', reason), false, loginFailureLocation('invalid_callback'));
    });
  }

  /** Consumes the login session and checks the provider it was started under, in one short transaction that commits the consume. */
  private open<R, T>(protocol: SignInProtocol<R, T>, attempt: Attempt, state: string, response: R): Promise<OpenedSignIn<T>> {
    return this.refusals.withSystemContext('a sign-in consumes the login session its state names', async () => {
      const consumed = await this.repo.consumeLoginSession(state);
      if (!consumed) {
        const expired = await this.repo.discardExpiredLoginSession(state);
        // An expired link attempt is still reported at the login page: the user retries from the start.
        const audited = { ...attempt, tenant: expired && tenantOf(expired), purpose: expired ? this.purposeOf(protocol, expired) : 'login' };
        const rejection = new LoginRejection('session_expired', expired ? 'state_expired' : 'state_unknown_or_already_used');
        throw this.refusal(audited, rejection, true, loginFailureLocation(rejection.code));
      }
      const { session, provider } = consumed;
      Object.assign(attempt, { tenant: tenantOf(session), purpose: this.purposeOf(protocol, session) });
      return this.refusing(attempt, true, async () => {
        if (!provider) throw new LoginRejection('sso_provider_inactive', 'provider_deleted');
        await protocol.precheck(session, provider, response);
        if (provider.status !== 'active') throw new LoginRejection('sso_provider_inactive', `provider_${provider.status}`);
        if (provider.generation !== session.generation) throw new LoginRejection('sso_config_changed', 'provider_reconfigured_since_login_start');
        const configured = await protocol.configure(session, provider, response);
        return { session, provider, tenant: tenantOf(session), purpose: attempt.purpose, protocol: configured };
      });
    });
  }

  private async finish<R, T, E>(protocol: SignInProtocol<R, T, E>, attempt: Attempt, opened: OpenedSignIn<T>, response: R): Promise<string> {
    const verified = await this.refusals.settle(() => this.refusing(attempt, false, () => protocol.verify(opened, response)));
    if (opened.purpose === 'link') {
      await this.refusals.withSystemContext('SSO linking attaches an identity to the account that asked for it', () =>
        this.refusing(attempt, false, () => this.linker.attach(verified)),
      );
      return LINK_SUCCESS_LOCATION;
    }
    // The sign-out record shares the mint's transaction: one transaction fewer, and a session never
    // commits without what its IdP will name it by.
    const minted = await this.refusals.withSystemContext('SSO sign-in resolves the account an IdP identity belongs to', async () => {
      const session = await this.refusing(attempt, false, () => this.mint(verified));
      await protocol.recordSession(session, verified, opened);
      return session;
    });
    return signedInLocation(opened.session.redirect_url, minted.exchangeCode);
  }

  /**
   * Account resolution and the session, in the caller's transaction: a refusal anywhere rolls
   * back all of it (even a just-provisioned account). The session's one-time exchange code is
   * written with it, so the code exists exactly when the session does.
   */
  private async mint(verified: VerifiedSignIn): Promise<MintedSignIn> {
    const { provider, userId, matchedBy, identityCreated } = await this.accounts.resolve(verified);
    const owner = ownerOf(provider);
    const mfa = provider.trusts_idp_mfa && verified.idpMfa;
    const { sessionId, pair } = await this.sessions.open({
      userId,
      scope: provider.org_id ? 'organization' : 'partner',
      ...owner,
      mfa,
      authMethod: 'sso',
      ssoProviderId: provider.id,
    });
    const exchangeCode = await this.exchange.issue({ ...owner, sessionId, userId, pair });
    await this.audit.record({
      action: 'sso.login',
      ...owner,
      resourceType: 'user',
      resourceId: userId,
      actor: { type: 'user', id: userId },
      details: { providerId: provider.id, matchedBy, mfa, identityCreated },
    });
    return { sessionId, ...owner, exchangeCode };
  }

  /** A rejection thrown by a step becomes this attempt's refusal. */
  private async refusing<T>(attempt: Attempt, keepWork: boolean, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof LoginRejection || error instanceof LinkRejection) throw this.refusal(attempt, error, keepWork);
      throw error;
    }
  }

  private refusal(attempt: Attempt, rejection: Rejection, keepWork: boolean, location = failureLocation(rejection, attempt.purpose)): Refusal {
    const answer = new RefusedSignIn({ location, clearStateCookie: attempt.consumed }, rejection.code);
    return new Refusal(answer, { keepWork, audit: signInRejectedEntry(rejection, attempt.tenant, attempt.purpose) });
  }

  private purposeOf(protocol: SignInProtocol<unknown, unknown>, session: Pick<LoginSessionRow, 'purpose'>): 'login' | 'link' {
    return protocol.traits.linking ? session.purpose : 'login';
  }
}
