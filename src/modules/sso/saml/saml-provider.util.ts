import { NAMEID_FORMAT_EMAIL } from './xml/saml-xml.util';

/** The SAML columns of sso_providers (spec 2.4, docs/sso-saml.md). */
export interface SamlProviderColumns {
  entity_id: string | null;
  sso_url: string | null;
  certificate: string | null;
  name_id_format: string | null;
  force_authn: boolean;
}

/** What a SAML sign-in with one provider needs, all of it present. */
export interface SamlSettings {
  /** The IdP's entity id: the Issuer its responses and assertions must carry. */
  entityId: string;
  /** Where AuthnRequests are sent (HTTP-Redirect binding). */
  ssoUrl: string;
  /** Every certificate whose key may sign; more than one while the IdP rotates keys. */
  certificates: string[];
  nameIdFormat: string;
  forceAuthn: boolean;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The PEM certificates of the stored `certificate` column, one string each. */
export function splitCertificates(stored: string | null): string[] {
  return (stored ?? '').match(PEM_BLOCK) ?? [];
}

/**
 * The provider's SAML settings, or the API names of the fields it lacks (the same fields
 * the administration routes require before a SAML provider may be active).
 */
export function samlSettings(columns: SamlProviderColumns): { settings: SamlSettings } | { missing: string[] } {
  const certificates = splitCertificates(columns.certificate);
  const missing = [
    ['entityId', !!columns.entity_id],
    ['ssoUrl', !!columns.sso_url],
    ['certificate', certificates.length > 0],
  ]
    .filter(([, present]) => !present)
    .map(([field]) => field as string);
  if (missing.length > 0) return { missing };
  return {
    settings: {
      entityId: columns.entity_id!,
      ssoUrl: columns.sso_url!,
      certificates,
      nameIdFormat: columns.name_id_format || NAMEID_FORMAT_EMAIL,
      forceAuthn: columns.force_authn,
    },
  };
}
