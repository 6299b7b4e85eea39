import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CacheProvider, Profile, SAML, SamlStatusError, ValidateInResponseTo } from '@node-saml/node-saml';
import { decryptXml } from '@node-saml/node-saml/lib/xml';
import { XMLSerializer } from '@xmldom/xmldom';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { LOGIN_SESSION_TTL_SECONDS } from '../login/state-cookie.util';
import { SAML_ACS_PATH } from './saml-cookie.util';
import type { SamlSettings } from './saml-provider.util';
import { buildSpMetadata } from './xml/saml-metadata.util';
import { firstChildElement, NAMEID_FORMAT_EMAIL, parseSamlXml, SAML_NS } from './xml/saml-xml.util';

/** Clock skew tolerated on every NotBefore / NotOnOrAfter (node-saml defaults to none). */
export const SAML_CLOCK_SKEW_MS = 60_000;

export const SAML_METADATA_PATH = '/api/v1/sso/saml/metadata';
/** The SP's Single Logout service (HTTP-Redirect), one per provider: `${SAML_SLO_PATH}/<providerId>`. */
export const SAML_SLO_PATH = '/api/v1/sso/saml/slo';

/** What a LogoutRequest names: the NameID (and format) and SessionIndex recorded at sign-in. */
export interface SamlLogoutSubject {
  nameId: string;
  nameIdFormat: string | null;
  sessionIndex: string | null;
}

/** A validated HTTP-Redirect logout message from the IdP. */
export type ValidatedLogoutMessage =
  | { kind: 'request'; id: string; nameId: string; nameIdFormat: string | null; sessionIndex: string | null }
  | { kind: 'response' };

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
  if (/decrypt|EncryptedAssertion/i.test(message)) return 'assertion_decryption_failed';
  return 'response_invalid';
}

/** The first of `keys` that opens the response's EncryptedAssertion; undefined when none does (or there is none). */
async function openingKey(samlResponse: string, keys: string[]): Promise<string | undefined> {
  let encrypted: string;
  try {
    const response = parseSamlXml(Buffer.from(samlResponse, 'base64').toString('utf8')).documentElement!;
    const element = firstChildElement(response, SAML_NS.assertion, 'EncryptedAssertion');
    if (!element) return undefined;
    encrypted = new XMLSerializer().serializeToString(element);
  } catch {
    return undefined;
  }
  for (const key of keys) {
    try {
      await decryptXml(encrypted, key);
      return key;
    } catch {
      // Not this key (RSA-OAEP or the content's authentication tag refused it): try the next one.
    }
  }
  return undefined;
}

function logoutValidationReason(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/query signature/i.test(message)) return 'logout_signature_invalid';
  if (/is not supported/i.test(message)) return 'logout_signature_algorithm_unsupported';
  if (/issuer/i.test(message)) return 'logout_issuer_mismatch';
  if (/InResponseTo/i.test(message)) return 'logout_in_response_to_invalid';
  if (/status code/i.test(message)) return 'logout_status_not_success';
  if (/NameID/i.test(message)) return 'logout_name_id_missing';
  if (/not yet valid|expired/i.test(message)) return 'logout_outside_validity_window';
  return 'logout_message_invalid';
}

/**
 * The service provider side of SAML 2.0 (spec 1.10), built on @node-saml/node-saml: its SP
 * identity (entity id, ACS), its metadata, AuthnRequests and the signature verification of
 * responses. A node-saml instance is made per provider and per use, from the provider's
 * settings and a cache bound to that provider, so nothing is shared between tenants.
 */
@Injectable()
export class SamlSpService {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Spec 1.10: {base_url}/api/v1/sso/saml/acs. */
  get acsUrl(): string {
    return `${this.config.publicUrl}${SAML_ACS_PATH}`;
  }

  /** SAML_SP_ENTITY_ID for the deployment, else the provider's metadata URL. */
  spEntityId(providerId: string): string {
    return this.config.samlSpEntityId ?? `${this.config.publicUrl}${SAML_METADATA_PATH}/${providerId}`;
  }

  sloUrl(providerId: string): string {
    return `${this.config.publicUrl}${SAML_SLO_PATH}/${providerId}`;
  }

  /**
   * Spec 1.10, first table: emailAddress NameID, WantAssertionsSigned, HTTP-POST ACS; and the
   * Single Logout service with the SP's keys, newest first: the current one for signing and
   * encryption, a replaced one still in its overlap window for encryption only.
   */
  metadataXml(providerId: string, keys: { certificatePem: string }[]): string {
    return buildSpMetadata({
      entityId: this.spEntityId(providerId),
      acsUrl: this.acsUrl,
      nameIdFormat: NAMEID_FORMAT_EMAIL,
      wantAssertionsSigned: true,
      keys: keys.map((k, i) => ({ certificatePem: k.certificatePem, uses: i === 0 ? ['signing', 'encryption'] : ['encryption'] })),
      singleLogoutUrl: this.sloUrl(providerId),
    });
  }

  /**
   * SP-initiated Single Logout: the HTTP-Redirect URL of a LogoutRequest for `subject`, signed
   * (RSA-SHA256 over the query, as the binding says) with the SP's current key. node-saml records
   * the request id in `cache`, so the IdP's LogoutResponse must answer it.
   */
  logoutRequestUrl(providerId: string, settings: SamlSettings, idpSloUrl: string, cache: CacheProvider, signingKeyPem: string, subject: SamlLogoutSubject, relayState: string): Promise<string> {
    const profile = { issuer: settings.entityId, nameID: subject.nameId, nameIDFormat: subject.nameIdFormat ?? NAMEID_FORMAT_EMAIL, sessionIndex: subject.sessionIndex ?? undefined } as Profile;
    return this.saml(providerId, settings, cache, undefined, { logoutUrl: idpSloUrl, privateKey: signingKeyPem }).getLogoutUrlAsync(profile, relayState, {});
  }

  /** IdP-initiated Single Logout: our signed LogoutResponse (Success, or a failure status) to the IdP's request. */
  logoutResponseUrl(providerId: string, settings: SamlSettings, idpSloUrl: string, cache: CacheProvider, signingKeyPem: string, requestId: string, relayState: string | null, success: boolean): Promise<string> {
    return this.saml(providerId, settings, cache, undefined, { logoutUrl: idpSloUrl, privateKey: signingKeyPem }).getLogoutResponseUrlAsync(
      { ID: requestId } as Profile,
      relayState ?? '',
      {},
      success,
    );
  }

  /**
   * node-saml's checks of an HTTP-Redirect logout message: the query signature by one of the
   * provider's certificates, the Issuer, a LogoutRequest's time window, a LogoutResponse's status
   * and InResponseTo (known to `cache`, then removed). The caller has already required a
   * signature and checked the envelope (node-saml passes an unsigned message).
   */
  async validateLogoutRedirect(providerId: string, settings: SamlSettings, cache: CacheProvider, query: Record<string, string>, rawQuery: string): Promise<ValidatedLogoutMessage> {
    let result;
    try {
      result = await this.saml(providerId, settings, cache).validateRedirectAsync(query, rawQuery);
    } catch (error) {
      throw new SamlValidationError(logoutValidationReason(error));
    }
    const profile = result.profile;
    if (!profile) return { kind: 'response' };
    return { kind: 'request', id: profile.ID!, nameId: profile.nameID, nameIdFormat: profile.nameIDFormat ?? null, sessionIndex: profile.sessionIndex ?? null };
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
  async verifiedAssertionXml(
    providerId: string,
    settings: SamlSettings,
    cache: CacheProvider,
    samlResponse: string,
    decryption: { requestId: string; keys: string[] } = { requestId: '', keys: [] },
  ): Promise<string> {
    // An encrypted assertion opens with one of the SP's published keys: the current one, or a replaced
    // one during its overlap window. The key that opens it is found first; node-saml then runs once with it.
    let decryptionPvk: string | undefined;
    if (decryption.keys.length > 0) {
      decryptionPvk = await openingKey(samlResponse, decryption.keys);
      if (!decryptionPvk) {
        // As node-saml does whatever the outcome: the request this response answered is used up.
        await cache.removeAsync(decryption.requestId);
        throw new SamlValidationError('assertion_decryption_failed');
      }
    }
    let profile: Profile | null;
    try {
      ({ profile } = await this.saml(providerId, settings, cache, undefined, undefined, decryptionPvk).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (error) {
      throw new SamlValidationError(validationReason(error));
    }
    if (!profile) throw new SamlValidationError('not_an_authn_response');
    return profile.getAssertionXml!();
  }

  private saml(providerId: string, settings: SamlSettings, cache: CacheProvider, requestId?: string, logout?: { logoutUrl: string; privateKey: string }, decryptionPvk?: string): SAML {
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
      ...(logout ? { logoutUrl: logout.logoutUrl, privateKey: logout.privateKey, signatureAlgorithm: 'sha256' as const } : {}),
      ...(decryptionPvk ? { decryptionPvk } : {}),
    });
  }
}
