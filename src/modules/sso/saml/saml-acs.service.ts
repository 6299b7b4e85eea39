import { Injectable, Logger } from '@nestjs/common';
import { SecretBox } from '../../../infra/crypto/secret-box.service';
import { TenantTransaction } from '../../../infra/database/tenant-transaction.service';
import { AccountResolver, VerifiedSignIn } from '../login/account-resolver.service';
import { LoginAudit } from '../login/login-audit.service';
import { domainAllowed } from '../login/oidc-claims.util';
import { loginFailureLocation } from '../login/sso-callback.service';
import { signedInLocation } from '../login/redirect-path.util';
import { LoginRejection } from '../login/sso-login.errors';
import { LoginProviderRow, LoginSessionRow, SsoLoginRepository } from '../login/sso-login.repository';
import { isWellFormedState, stateMatchesCookie } from '../login/state-cookie.util';
import { assertionExpiryMs, checkAssertion, checkResponseEnvelope, readAssertion, SamlAssertion } from './saml-assertion.util';
import { mapSamlFields, samlExternalId, samlIdentity } from './saml-attributes.util';
import { samlSettings, SamlSettings } from './saml-provider.util';
import { SamlRequestCache } from './saml-request-cache.service';
import { SAML_CLOCK_SKEW_MS, SamlServiceProvider, SamlValidationError } from './saml-sp.service';
import { SamlRepository, SamlTenant } from './saml.repository';
import { SamlXmlError } from './xml/saml-xml.errors';
import { firstChildElement, parseSamlXml, SAML_NS } from './xml/saml-xml.util';
import { SsoSignOutService } from '../login/sso-sign-out.service';
import { SamlSpKeys } from './saml-sp-keys.service';
import { SamlSpKeysRepository } from './saml-sp-keys.repository';

/** The form fields of the HTTP-POST binding; anything else the IdP posts is ignored. */
export interface AcsForm {
  SAMLResponse?: unknown;
  RelayState?: unknown;
}

export interface AcsResult {
  /** A path on this origin; never carries IdP, library or database text. */
  location: string;
  /** Whether the state cookie has served its purpose (its login session was consumed). */
  clearStateCookie: boolean;
}

/** Far above any real response (a few KB, tens with large group lists), far below the body limit. */
export const MAX_SAML_RESPONSE_LENGTH = 512 * 1024;

/**
 * Authentication contexts that state several factors were used: the REFEDS MFA profile and
 * the Microsoft Entra / AD FS class. Anything else does not count (spec 1.7.3).
 */
const MFA_CONTEXTS = new Set(['https://refeds.org/profile/mfa', 'http://schemas.microsoft.com/claims/multipleauthn']);

type Opened = { session: LoginSessionRow; provider: LoginProviderRow; settings: SamlSettings; tenant: SamlTenant };
type Refusal = { rejection: LoginRejection };

/**
 * POST /sso/saml/acs, in the order of the OIDC callback: the browser binding first (a
 * mismatch leaves the login session untouched), then the atomic consume of the login
 * session the RelayState names and the provider checks, then the response: the strict XML
 * parse and the envelope, node-saml's signature, InResponseTo, Conditions and Audience
 * checks, and the profile rules node-saml leaves out, all on the signed assertion. A used
 * assertion is recorded before the account is resolved, so it never signs in twice. The
 * end is the OIDC flow's: AccountResolver, then `#ssoCode=`.
 */
@Injectable()
export class SamlAcsService {
  private readonly logger = new Logger(SamlAcsService.name);

  constructor(
    private readonly loginRepo: SsoLoginRepository,
    private readonly repo: SamlRepository,
    private readonly tx: TenantTransaction,
    private readonly box: SecretBox,
    private readonly sp: SamlServiceProvider,
    private readonly cache: SamlRequestCache,
    private readonly accounts: AccountResolver,
    private readonly loginAudit: LoginAudit,
    private readonly signOut: SsoSignOutService,
    private readonly keys: SamlSpKeys,
    private readonly keysRepo: SamlSpKeysRepository,
  ) {}

  private async requiresEncryption(providerId: string): Promise<boolean> {
    const settings = await this.tx.withSystemContext('the SAML ACS reads whether its provider requires encrypted assertions', () => this.keysRepo.settings(providerId));
    return settings?.require_encrypted_assertions ?? false;
  }

  async handle(form: AcsForm, stateCookie: unknown): Promise<AcsResult> {
    let tenant: SamlTenant | null = null;
    try {
      if (!stateMatchesCookie(this.box, form.RelayState, stateCookie)) return await this.refuseUnbound(form.RelayState, stateCookie);
      const opened = await this.open(form.RelayState as string);
      if ('rejection' in opened) return { location: loginFailureLocation(opened.rejection.code), clearStateCookie: true };
      tenant = opened.tenant;
      return { location: await this.finish(opened, form.SAMLResponse), clearStateCookie: true };
    } catch (error) {
      // Whatever failed, the browser gets the generic code and nothing of the error; the audit trail gets the fact.
      this.logger.error({ err: error }, 'SAML assertion consumer failed');
      const rejection = new LoginRejection('sso_error', 'internal_error');
      await this.loginAudit
        .rejectedApart(rejection, tenant, 'login')
        .catch((auditError: Error) => this.logger.error({ err: auditError }, 'Could not audit a failed SAML response'));
      return { location: loginFailureLocation(rejection.code), clearStateCookie: true };
    }
  }

  /** A post from another browser (no or another cookie). The login session stays usable. */
  private async refuseUnbound(relayState: unknown, cookie: unknown): Promise<AcsResult> {
    const reason = !isWellFormedState(relayState) ? 'relay_state_invalid' : typeof cookie !== 'string' ? 'state_cookie_missing' : 'state_cookie_mismatch';
    await this.tx.withSystemContext('a refused SAML response is attributed to the tenant its RelayState names', async () => {
      const named = isWellFormedState(relayState) ? await this.loginRepo.peekLoginSession(relayState) : null;
      const tenant = named ? { orgId: named.org_id, partnerId: named.partner_id, providerId: named.provider_id } : null;
      await this.loginAudit.rejected(new LoginRejection('invalid_callback', reason), tenant, 'login');
    });
    return { location: loginFailureLocation('invalid_callback'), clearStateCookie: false };
  }

  /** Consumes the login session and checks the provider it was started under, in one short transaction. */
  private open(relayState: string): Promise<Opened | Refusal> {
    return this.tx.withSystemContext('the SAML ACS consumes the login session its RelayState names', async () => {
      const session = await this.loginRepo.consumeLoginSession(relayState);
      if (!session) {
        const expired = await this.loginRepo.discardExpiredLoginSession(relayState);
        const rejection = new LoginRejection('session_expired', expired ? 'state_expired' : 'state_unknown_or_already_used');
        await this.loginAudit.rejected(rejection, expired ? { orgId: expired.org_id, partnerId: expired.partner_id, providerId: expired.provider_id } : null, 'login');
        return { rejection };
      }
      const provider = await this.loginRepo.provider(session.provider_id);
      const columns = provider?.type === 'saml' ? await this.repo.samlColumns(provider.id) : null;
      const tenant = { orgId: session.org_id, partnerId: session.partner_id, providerId: session.provider_id };
      const checked = this.checkOpened(session, provider, columns && samlSettings(columns));
      if (checked instanceof LoginRejection) {
        await this.loginAudit.rejected(checked, tenant, 'login');
        return { rejection: checked };
      }
      return { session, provider: provider!, settings: checked, tenant };
    });
  }

  private checkOpened(
    session: LoginSessionRow,
    provider: LoginProviderRow | null,
    configured: ReturnType<typeof samlSettings> | null,
  ): SamlSettings | LoginRejection {
    if (!provider) return new LoginRejection('sso_provider_inactive', 'provider_deleted');
    // An OIDC state (or a link attempt) has no business at the ACS.
    if (provider.type !== 'saml' || session.purpose !== 'login') return new LoginRejection('invalid_callback', 'login_session_not_saml');
    if (provider.status !== 'active') return new LoginRejection('sso_provider_inactive', `provider_${provider.status}`);
    if (provider.generation !== session.generation) return new LoginRejection('sso_config_changed', 'provider_reconfigured_since_login_start');
    if (!configured || 'missing' in configured) return new LoginRejection('invalid_provider_configuration', 'provider_incomplete');
    return configured.settings;
  }

  private async finish(opened: Opened, samlResponse: unknown): Promise<string> {
    const verified = await this.verify(opened, samlResponse);
    if (verified instanceof LoginRejection) {
      await this.loginAudit.rejectedApart(verified, opened.tenant, 'login');
      return loginFailureLocation(verified.code);
    }
    const signedIn = await this.accounts.signIn(verified);
    if (signedIn instanceof LoginRejection) return loginFailureLocation(signedIn.code);
    // What the IdP's LogoutRequest will name this session by (Single Logout).
    const { nameId, nameIdFormat, sessionIndex } = verified.profile as { nameId: string; nameIdFormat: string | null; sessionIndex: string | null };
    await this.signOut.recordSamlSignIn(signedIn.exchangeCode, opened.provider.id, nameId, nameIdFormat, sessionIndex);
    return signedInLocation(opened.session.redirect_url, signedIn.exchangeCode);
  }

  /** The response checks, then the mapping and the claim safeguards that need no account. */
  private async verify({ session, provider, settings, tenant }: Opened, samlResponse: unknown): Promise<VerifiedSignIn | LoginRejection> {
    const refuse = (reason: string) => new LoginRejection('sso_error', reason);
    if (typeof samlResponse !== 'string' || samlResponse === '') return refuse('saml_response_missing');
    if (samlResponse.length > MAX_SAML_RESPONSE_LENGTH) return refuse('saml_response_too_large');

    const spEntityId = this.sp.spEntityId(provider.id);
    const expected = { idpEntityId: settings.entityId, spEntityId, acsUrl: this.sp.acsUrl, requestId: session.nonce };
    let encrypted: boolean;
    try {
      const doc = parseSamlXml(Buffer.from(samlResponse, 'base64').toString('utf8'));
      const envelope = checkResponseEnvelope(doc, expected);
      if (envelope) return refuse(envelope);
      encrypted = firstChildElement(doc.documentElement!, SAML_NS.assertion, 'EncryptedAssertion') !== undefined;
    } catch (error) {
      if (error instanceof SamlXmlError) return refuse(`response_${error.code}`);
      throw error;
    }
    // The provider's flag: a plain assertion is refused before its signature is even looked at.
    if (!encrypted && (await this.requiresEncryption(provider.id))) return refuse('assertion_not_encrypted');

    let assertion: SamlAssertion;
    try {
      const keys = encrypted ? (await this.keys.published(tenant)).map((k) => k.privateKeyPem) : [];
      assertion = readAssertion(await this.sp.verifiedAssertionXml(provider.id, settings, this.cache.forProvider(tenant), samlResponse, { requestId: session.nonce, keys }));
    } catch (error) {
      if (error instanceof SamlValidationError) return refuse(error.reason);
      throw error;
    }
    const checked = checkAssertion(assertion, { ...expected, nowMs: Date.now(), skewMs: SAML_CLOCK_SKEW_MS });
    if ('failure' in checked) return refuse(checked.failure);

    const subject = { nameId: assertion.nameId!, nameIdFormat: assertion.nameIdFormat, attributes: assertion.attributes };
    const fields = mapSamlFields(subject, provider.attribute_mapping);
    const identity = samlIdentity(fields);
    if (typeof identity === 'string') return refuse(identity);
    const externalId = samlExternalId(subject, identity);
    if (externalId.length > 255) return refuse('name_id_too_long');

    // Recorded before the account is resolved: a refused sign-in still used the assertion up.
    const fresh = await this.tx.withSystemContext('the SAML ACS records a used assertion', async () => {
      await this.repo.sweepConsumedAssertions();
      return this.repo.consumeAssertion(tenant, assertion.id!, new Date(assertionExpiryMs(assertion, checked.confirmation) + SAML_CLOCK_SKEW_MS));
    });
    if (!fresh) return refuse('assertion_replayed');

    if (!domainAllowed(provider.allowed_domains, identity.domain)) return new LoginRejection('domain_not_allowed', 'email_domain_not_in_allowed_domains');

    const profile = {
      issuer: assertion.issuer,
      nameId: assertion.nameId,
      nameIdFormat: assertion.nameIdFormat,
      sessionIndex: assertion.sessionIndex,
      authnContextClassRefs: assertion.authnContextClassRefs,
      attributes: assertion.attributes,
      mapped: fields,
    };
    return {
      session,
      identity,
      profile,
      idpMfa: assertion.authnContextClassRefs.some((ref) => MFA_CONTEXTS.has(ref)),
      // The account resolution is shared with OIDC; a SAML sign-in carries no IdP tokens.
      login: { sub: externalId, idTokenClaims: {}, idToken: '', userInfo: profile, accessToken: '', refreshToken: null, tokenExpiresAt: null },
    };
  }
}
