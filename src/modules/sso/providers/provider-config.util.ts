import { X509Certificate } from 'node:crypto';
import { normaliseDomain } from '../../../infra/net/domain.util';
import { SsoProviderConfig, SsoProviderType } from './sso-provider.types';

/** Fields that only mean something for one protocol; sending them for the other is an error. */
export const OIDC_ONLY_FIELDS = ['issuer', 'clientId', 'clientSecret', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'scopes'] as const;
export const SAML_ONLY_FIELDS = ['entityId', 'ssoUrl', 'certificate', 'nameIdFormat', 'forceAuthn', 'idpMetadataXml', 'idpMetadataUrl'] as const;

export const MAX_ALLOWED_DOMAINS_LENGTH = 1000;
export const MAX_CERTIFICATE_LENGTH = 65536;

export interface FieldProblem {
  field: string;
  message: string;
}

/** The fields of `input` that belong to the other protocol. */
export function foreignFields(type: SsoProviderType, input: object): FieldProblem[] {
  const foreign: readonly string[] = type === 'oidc' ? SAML_ONLY_FIELDS : OIDC_ONLY_FIELDS;
  const other = type === 'oidc' ? 'SAML' : 'OIDC';
  return foreign
    // null only clears, which is harmless for a field the protocol does not use.
    .filter((field) => (input as Record<string, unknown>)[field] != null)
    .map((field) => ({ field, message: `${field} applies to ${other} providers only` }));
}

/**
 * What a provider still lacks to complete a sign-in, as API field names. Such a provider
 * may neither be active nor enforce SSO, so a tenant cannot lock itself out of password
 * login with a provider that cannot sign anyone in.
 */
export function missingForLogin(
  type: SsoProviderType,
  config: Pick<SsoProviderConfig, 'issuer' | 'clientId' | 'authorizationUrl' | 'tokenUrl' | 'userInfoUrl' | 'jwksUrl' | 'entityId' | 'ssoUrl' | 'certificate'>,
  hasClientSecret: boolean,
): string[] {
  const required: [string, unknown][] =
    type === 'oidc'
      ? [
          ['issuer', config.issuer],
          ['clientId', config.clientId],
          ['clientSecret', hasClientSecret],
          ['authorizationUrl', config.authorizationUrl],
          ['tokenUrl', config.tokenUrl],
          ['userInfoUrl', config.userInfoUrl],
          ['jwksUrl', config.jwksUrl],
        ]
      : [
          ['entityId', config.entityId],
          ['ssoUrl', config.ssoUrl],
          ['certificate', config.certificate],
        ];
  return required.filter(([, value]) => !value).map(([field]) => field);
}

/**
 * Comma-separated email domains, each normalised as `normaliseDomain` does, duplicates
 * dropped. An empty list means every domain and is stored as null.
 */
export function normaliseAllowedDomains(input: string): { value: string | null } | { problem: FieldProblem } {
  const parts = input.split(',').map((part) => part.trim()).filter((part) => part !== '');
  const domains: string[] = [];
  for (const part of parts) {
    const domain = normaliseDomain(part);
    if (!domain) return { problem: { field: 'allowedDomains', message: `"${part.slice(0, 100)}" is not a domain name` } };
    if (!domains.includes(domain)) domains.push(domain);
  }
  const value = domains.join(',');
  if (value.length > MAX_ALLOWED_DOMAINS_LENGTH) {
    return { problem: { field: 'allowedDomains', message: `allowedDomains must be at most ${MAX_ALLOWED_DOMAINS_LENGTH} characters` } };
  }
  return { value: value === '' ? null : value };
}

/** RFC 6749 §3.3 scope tokens, space-separated, one of which must be `openid`. */
export function normaliseScopes(input: string): { value: string } | { problem: FieldProblem } {
  const tokens = input.split(' ').filter((token) => token !== '');
  if (!tokens.every((token) => /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(token))) {
    return { problem: { field: 'scopes', message: 'scopes must be space-separated scope tokens' } };
  }
  if (!tokens.includes('openid')) return { problem: { field: 'scopes', message: 'scopes must include openid' } };
  return { value: [...new Set(tokens)].join(' ') };
}

/**
 * One or more PEM certificates (an IdP rotating keys publishes two), each parsed by
 * node:crypto so that a typo is caught when it is saved rather than at sign-in. Returns
 * them re-encoded one after the other.
 */
export function normaliseCertificates(input: string): { value: string } | { problem: FieldProblem } {
  const blocks = input.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const rest = input.replace(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g, '').trim();
  if (blocks.length === 0 || rest !== '') {
    return { problem: { field: 'certificate', message: 'certificate must be one or more PEM certificates' } };
  }
  try {
    return { value: blocks.map((block) => new X509Certificate(block).toString().trim()).join('\n') };
  } catch {
    return { problem: { field: 'certificate', message: 'certificate holds a PEM block that is not a valid X.509 certificate' } };
  }
}

/** The fields whose values differ, by API name; the secret is compared by the caller. */
export function changedFields<T extends object>(current: T, patch: Partial<T>): (keyof T)[] {
  return (Object.keys(patch) as (keyof T)[]).filter((key) => !sameValue(current[key], patch[key]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A URL the browser is sent to (the SAML SSO URL): the service never calls it, so it may
 * be an intranet host, but it must be https, except plain-http loopback in development.
 */
export function isAcceptableBrowserUrl(url: string, allowInsecureLoopback: boolean): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.username !== '' || parsed.password !== '') return false;
    if (parsed.protocol === 'https:') return true;
    return allowInsecureLoopback && parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname);
  } catch {
    return false;
  }
}
