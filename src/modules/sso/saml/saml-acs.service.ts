import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { VerifiedSignIn } from '../login/account-resolver.service';
import { domainAllowed } from '../login/oidc-claims.util';
import { LoginRejection } from '../login/sso-login.errors';
import { LoginProviderRow, LoginSessionRow } from '../login/sso-login.repository';
import { SsoSessionLinkService } from '../login/sso-session-link.service';
import { MintedSignIn, OpenedSignIn, SignInPipelineService, SignInProtocol, SignInResult, SignInTraits } from '../sign-in/sign-in-pipeline.service';
import { assertionExpiryMs, checkAssertion, checkResponseEnvelope, readAssertion, SamlAssertion } from './saml-assertion.util';
import { mapSamlFields, samlExternalId, samlIdentity } from './saml-attributes.util';
import { samlSettings, SamlSettings } from './saml-provider.util';
import { SamlRequestCacheService } from './saml-request-cache.service';
import { SAML_CLOCK_SKEW_MS, SamlSpService, SamlValidationError } from './saml-sp.service';
import { SamlRepository } from './saml.repository';
import { SamlXmlError } from './xml/saml-xml.errors';
import { firstChildElement, parseSamlXml, SAML_NS } from './xml/saml-xml.util';
import { SamlSpKeysService } from './saml-sp-keys.service';
import { SamlSpKeysRepository } from './saml-sp-keys.repository';

/** The form fields of the HTTP-POST binding; anything else the IdP posts is ignored. */
export interface AcsForm {
  SAMLResponse?: unknown;
  RelayState?: unknown;
}

/** What a SAML IdP names a session by in its LogoutRequest. */
interface SamlSessionNames {
  nameId: string;
  nameIdFormat: string | null;
  sessionIndex: string | null;
}

/** Far above any real response (a few KB, tens with large group lists), far below the body limit. */
export const MAX_SAML_RESPONSE_LENGTH = 512 * 1024;

/**
 * Authentication contexts that state several factors were used: the REFEDS MFA profile and
 * the Microsoft Entra / AD FS class. Anything else does not count (spec 1.7.3).
 */
const MFA_CONTEXTS = new Set(['https://refeds.org/profile/mfa', 'http://schemas.microsoft.com/claims/multipleauthn']);

/**
 * POST /sso/saml/acs: the SAML adapter of the sign-in pipeline (SignInPipelineService, which
 * binds the browser, consumes the login session the RelayState names and resolves the account).
 * Its own steps: the session must be a SAML login, the provider's SAML settings, then the
 * response: the strict XML parse and the envelope, node-saml's signature, InResponseTo,
 * Conditions and Audience checks, and the profile rules node-saml leaves out, all on the signed
 * assertion. A used assertion is recorded before the account is resolved, so it never signs in
 * twice.
 */
@Injectable()
export class SamlAcsService implements SignInProtocol<AcsForm, SamlSettings, SamlSessionNames> {
  readonly traits: SignInTraits = { protocol: 'saml', malformedStateReason: 'relay_state_invalid', failureMessage: 'SAML assertion consumer failed', linking: false };

  constructor(
    private readonly pipeline: SignInPipelineService,
    private readonly repo: SamlRepository,
    private readonly tx: TenantTransactionService,
    private readonly sp: SamlSpService,
    private readonly cache: SamlRequestCacheService,
    private readonly sessionLinks: SsoSessionLinkService,
    private readonly keys: SamlSpKeysService,
    private readonly keysRepo: SamlSpKeysRepository,
  ) {}

  handle(form: AcsForm, stateCookie: unknown): Promise<SignInResult> {
    return this.pipeline.complete(this, form.RelayState, form, stateCookie);
  }

  /** An OIDC state (or a link attempt) has no business at the ACS. */
  async precheck(session: LoginSessionRow, provider: LoginProviderRow): Promise<void> {
    if (provider.type !== 'saml' || session.purpose !== 'login') throw new LoginRejection('invalid_callback', 'login_session_not_saml');
  }

  async configure(_session: LoginSessionRow, provider: LoginProviderRow): Promise<SamlSettings> {
    const columns = await this.repo.samlColumns(provider.id);
    const configured = columns && samlSettings(columns);
    if (!configured || 'missing' in configured) throw new LoginRejection('invalid_provider_configuration', 'provider_incomplete');
    return configured.settings;
  }

  private async requiresEncryption(providerId: string): Promise<boolean> {
    const settings = await this.tx.withSystemContext('the SAML ACS reads whether its provider requires encrypted assertions', () => this.keysRepo.signInSettings(providerId));
    return settings?.requireEncryptedAssertions ?? false;
  }

  /** The response checks, then the mapping and the claim safeguards that need no account. */
  async verify({ session, provider, tenant, protocol: settings }: OpenedSignIn<SamlSettings>, { SAMLResponse: samlResponse }: AcsForm): Promise<VerifiedSignIn<SamlSessionNames>> {
    const refuse: (reason: string) => never = (reason) => {
      throw new LoginRejection('sso_error', reason);
    };
    if (typeof samlResponse !== 'string' || samlResponse === '') refuse('saml_response_missing');
    if (samlResponse.length > MAX_SAML_RESPONSE_LENGTH) refuse('saml_response_too_large');

    const spEntityId = this.sp.spEntityId(provider.id);
    const expected = { idpEntityId: settings.entityId, spEntityId, acsUrl: this.sp.acsUrl, requestId: session.nonce };
    let encrypted: boolean;
    try {
      const doc = parseSamlXml(Buffer.from(samlResponse, 'base64').toString('utf8'));
      const envelope = checkResponseEnvelope(doc, expected);
      if (envelope) refuse(envelope);
      encrypted = firstChildElement(doc.documentElement!, SAML_NS.assertion, 'EncryptedAssertion') !== undefined;
    } catch (error) {
      if (error instanceof SamlXmlError) refuse(`response_${error.code}`);
      throw error;
    }
    // The provider's flag: a plain assertion is refused before its signature is even looked at.
    if (!encrypted && (await this.requiresEncryption(provider.id))) refuse('assertion_not_encrypted');

    let assertion: SamlAssertion;
    try {
      const keys = encrypted ? (await this.keys.published(tenant)).map((k) => k.privateKeyPem) : [];
      assertion = readAssertion(await this.sp.verifiedAssertionXml(provider.id, settings, this.cache.forProvider(tenant), samlResponse, { requestId: session.nonce, keys }));
    } catch (error) {
      if (error instanceof SamlValidationError) refuse(error.reason);
      throw error;
    }
    const checked = checkAssertion(assertion, { ...expected, nowMs: Date.now(), skewMs: SAML_CLOCK_SKEW_MS });
    if ('failure' in checked) refuse(checked.failure);

    const subject = { nameId: assertion.nameId!, nameIdFormat: assertion.nameIdFormat, attributes: assertion.attributes };
    const fields = mapSamlFields(subject, provider.attribute_mapping);
    const identity = samlIdentity(fields);
    if (typeof identity === 'string') refuse(identity);
    const externalId = samlExternalId(subject, identity);
    if (externalId.length > 255) refuse('name_id_too_long');

    // Recorded before the account is resolved: a refused sign-in still used the assertion up.
    const fresh = await this.tx.withSystemContext('the SAML ACS records a used assertion', async () => {
      await this.repo.sweepConsumedAssertions();
      return this.repo.consumeAssertion(tenant, assertion.id!, new Date(assertionExpiryMs(assertion, checked.confirmation) + SAML_CLOCK_SKEW_MS));
    });
    if (!fresh) refuse('assertion_replayed');

    if (!domainAllowed(provider.allowed_domains, identity.domain)) throw new LoginRejection('domain_not_allowed', 'email_domain_not_in_allowed_domains');

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
      subject: externalId,
      idpMfa: assertion.authnContextClassRefs.some((ref) => MFA_CONTEXTS.has(ref)),
      idpTokens: null,
      evidence: { nameId: assertion.nameId!, nameIdFormat: assertion.nameIdFormat, sessionIndex: assertion.sessionIndex },
    };
  }

  /** What the IdP's LogoutRequest will name this session by (Single Logout). */
  recordSession(minted: MintedSignIn, verified: VerifiedSignIn<SamlSessionNames>, opened: OpenedSignIn<SamlSettings>): Promise<void> {
    const { nameId, nameIdFormat, sessionIndex } = verified.evidence;
    return this.sessionLinks.recordSamlSignIn(minted, opened.provider.id, nameId, nameIdFormat, sessionIndex);
  }
}
