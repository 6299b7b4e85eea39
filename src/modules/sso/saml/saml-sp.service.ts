import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CacheProvider, Profile, SAML, SamlStatusError, ValidateInResponseTo } from '@node-saml/node-saml';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { LOGIN_SESSION_TTL_SECONDS } from '../login/state-cookie.util';
import { SAML_ACS_PATH } from './saml-cookie.util';
import type { SamlSettings } from './saml-provider.util';
import { buildSpMetadata } from './xml/saml-metadata.util';
import { NAMEID_FORMAT_EMAIL } from './xml/saml-xml.util';

/** Clock skew tolerated on every NotBefore / NotOnOrAfter (node-saml defaults to none). */
export const SAML_CLOCK_SKEW_MS = 60_000;

export const SAML_METADATA_PATH = '/api/v1/sso/saml/metadata';

/** A response node-saml refused, with a closed-set reason for the audit trail. */
export class SamlValidationError extends Error {
  override readonly name = 'SamlValidationError';
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Reads node-saml's refusal as an audit reason. Its messages are matched only to name the
 * reason; the text itself never leaves the process.
 */
function validationReason(error: unknown): string {
  if (error instanceof SamlStatusError) return 'idp_status_not_success';
  const message = error instanceof Error ? error.message : '';
  if (/InResponseTo/i.test(message)) return 'in_response_to_invalid';
  // node-saml picks a subject confirmation by its validity window alone.
  if (/subject confirmation/i.test(message)) return 'subject_confirmation_outside_validity_window';
  if (/not yet valid/i.test(message)) return 'assertion_not_yet_valid';
  if (/expired/i.test(message)) return 'assertion_expired';
  if (/audience/i.test(message)) return 'audience_mismatch';
  if (/signature|signed|referenced node|ID cannot refer|multiple assertions|transforms/i.test(message)) return 'signature_invalid';
  if (/decrypt|EncryptedAssertion/i.test(message)) return 'encrypted_assertion_unsupported';
  return 'response_invalid';
}

/**
 * The service provider side of SAML 2.0 (spec 1.10), built on @node-saml/node-saml: its SP
 * identity (entity id, ACS), its metadata, AuthnRequests and the signature verification of
 * responses. A node-saml instance is made per provider and per use, from the provider's
 * settings and a cache bound to that provider, so nothing is shared between tenants.
 */
@Injectable()
export class SamlServiceProvider {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Spec 1.10: {base_url}/api/v1/sso/saml/acs. */
  get acsUrl(): string {
    return `${this.config.publicUrl}${SAML_ACS_PATH}`;
  }

  /** SAML_SP_ENTITY_ID for the deployment, else the provider's metadata URL. */
  spEntityId(providerId: string): string {
    return this.config.samlSpEntityId ?? `${this.config.publicUrl}${SAML_METADATA_PATH}/${providerId}`;
  }

  /** Spec 1.10, first table: emailAddress NameID, WantAssertionsSigned, HTTP-POST ACS. */
  metadataXml(providerId: string): string {
    return buildSpMetadata({ entityId: this.spEntityId(providerId), acsUrl: this.acsUrl, nameIdFormat: NAMEID_FORMAT_EMAIL, wantAssertionsSigned: true });
  }

  /** An xs:ID for an AuthnRequest (an NCName: it must not start with a digit). */
  newRequestId(): string {
    return `_${randomBytes(20).toString('hex')}`;
  }

  /**
   * The HTTP-Redirect URL carrying the deflated AuthnRequest `requestId` and the RelayState.
   * node-saml records the request id in `cache` as it builds the request.
   */
  authorizeUrl(providerId: string, settings: SamlSettings, cache: CacheProvider, requestId: string, relayState: string): Promise<string> {
    return this.saml(providerId, settings, cache, requestId).getAuthorizeUrlAsync(relayState, undefined, {});
  }

  /**
   * node-saml's verification: a signature by one of the provider's certificates that covers
   * the assertion (its own, or the Response's), InResponseTo known to `cache` (and removed
   * from it, whatever the outcome), the Conditions window and the Audience. Throws
   * SamlValidationError; the caller checks what node-saml does not (Issuer, Destination,
   * Recipient, the subject confirmation) on the assertion XML this returns.
   */
  async verifiedAssertionXml(providerId: string, settings: SamlSettings, cache: CacheProvider, samlResponse: string): Promise<string> {
    let profile: Profile | null;
    try {
      ({ profile } = await this.saml(providerId, settings, cache).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (error) {
      throw new SamlValidationError(validationReason(error));
    }
    if (!profile) throw new SamlValidationError('not_an_authn_response');
    return profile.getAssertionXml!();
  }

  private saml(providerId: string, settings: SamlSettings, cache: CacheProvider, requestId?: string): SAML {
    const spEntityId = this.spEntityId(providerId);
    return new SAML({
      callbackUrl: this.acsUrl,
      entryPoint: settings.ssoUrl,
      issuer: spEntityId,
      audience: spEntityId,
      idpCert: settings.certificates,
      idpIssuer: settings.entityId,
      identifierFormat: settings.nameIdFormat,
      forceAuthn: settings.forceAuthn,
      // node-saml would ask for password authentication exactly, which IdPs enforcing MFA refuse.
      disableRequestedAuthnContext: true,
      authnRequestBinding: 'HTTP-Redirect',
      // Either signature is enough as long as it covers the assertion; node-saml then requires
      // the assertion's own signature exactly when the Response's is missing or invalid.
      wantAuthnResponseSigned: false,
      wantAssertionsSigned: false,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: LOGIN_SESSION_TTL_SECONDS * 1000,
      acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
      cacheProvider: cache,
      ...(requestId ? { generateUniqueId: () => requestId } : {}),
    });
  }
}
