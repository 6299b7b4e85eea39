import { domainOf } from '../../../infra/net/domain.util';
import type { AttributeMapping } from '../providers/sso-provider.types';

/** What the IdP said about the email: affirmatively verified, affirmatively unverified, or nothing. */
export type EmailVerification = 'verified' | 'unverified' | 'unknown';

export interface MappedIdentity {
  email: string;
  /** Normalised domain of the email (lower-case, IDN in punycode). */
  domain: string;
  name: string;
  groups: string[];
  emailVerification: EmailVerification;
}

export type MappingFailure = 'email_claim_missing' | 'email_claim_invalid';

const MAX_EMAIL = 255;
const MAX_NAME = 255;

/** Claims that describe the authentication event, not the person. */
const PROTOCOL_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'azp', 'at_hash', 'c_hash', 'auth_time', 'acr', 'amr', 'sid', 'jti']);

/**
 * The profile the attribute mapping reads (spec 1.1.10–11): the ID token's person claims,
 * overridden by UserInfo, which is the IdP's current answer.
 */
export function profileClaims(idTokenClaims: Record<string, unknown>, userInfo: Record<string, unknown>): Record<string, unknown> {
  const fromIdToken = Object.fromEntries(Object.entries(idTokenClaims).filter(([key]) => !PROTOCOL_CLAIMS.has(key)));
  return { ...fromIdToken, ...userInfo };
}

/**
 * `email_verified` as IdPs send it: a boolean, or the strings "true"/"false" some of them use.
 * Anything else (absent, null, a number) is no statement at all.
 */
export function emailVerification(claims: Record<string, unknown>): EmailVerification {
  const value = claims.email_verified;
  if (value === true || value === 'true') return 'verified';
  if (value === false || value === 'false') return 'unverified';
  return 'unknown';
}

/** The standard claim whose verification `email_verified` states (OpenID Connect Core 5.1). */
const STANDARD_EMAIL_CLAIM = 'email';

/**
 * What the IdP said about the email the mapping reads, bound to the claim source that supplied
 * it: the profile takes the email from UserInfo when UserInfo has one, so UserInfo's
 * `email_verified` is the statement about it; otherwise the ID token's. `email_verified` only
 * speaks about the standard `email` claim, so an email mapped from another claim (a UPN, a
 * custom attribute) is never verified by it. A `false` in either source wins over everything.
 */
export function sourcedEmailVerification(idTokenClaims: Record<string, unknown>, userInfo: Record<string, unknown>, emailClaim: string): EmailVerification {
  if (emailVerification(idTokenClaims) === 'unverified' || emailVerification(userInfo) === 'unverified') return 'unverified';
  if (emailClaim !== STANDARD_EMAIL_CLAIM) return 'unknown';
  const source = stringClaim(userInfo, emailClaim) !== null ? userInfo : idTokenClaims;
  return emailVerification(source);
}

/** Spec 1.7.2–3: MFA counts only when the ID token's amr lists `mfa`. */
export function amrIncludesMfa(idTokenClaims: Record<string, unknown>): boolean {
  const amr = idTokenClaims.amr;
  return Array.isArray(amr) && amr.includes('mfa');
}

function stringClaim(claims: Record<string, unknown>, key: string | undefined): string | null {
  if (!key) return null;
  const value = claims[key];
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * Maps the profile through the provider's attribute mapping (spec 2.3). `verification` is what
 * the IdP said about that email (sourcedEmailVerification); it is never read from the merged
 * profile, where one source's `email_verified` would vouch for the other's email.
 */
export function mapIdentity(claims: Record<string, unknown>, mapping: AttributeMapping, verification: EmailVerification): MappedIdentity | MappingFailure {
  const email = stringClaim(claims, mapping.email);
  if (!email) return 'email_claim_missing';
  const domain = domainOf(email);
  if (!domain || email.length > MAX_EMAIL || email.indexOf('@') !== email.lastIndexOf('@')) return 'email_claim_invalid';

  const first = stringClaim(claims, mapping.firstName);
  const last = stringClaim(claims, mapping.lastName);
  const name = stringClaim(claims, mapping.name) ?? ([first, last].filter(Boolean).join(' ') || email.slice(0, email.indexOf('@')));

  const rawGroups = mapping.groups ? claims[mapping.groups] : undefined;
  const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];

  return { email, domain, name: name.slice(0, MAX_NAME), groups, emailVerification: verification };
}

/** allowedDomains (spec 1.1.12): empty means every domain; otherwise the email domain is one of them. */
export function domainAllowed(allowedDomains: string | null, domain: string): boolean {
  if (!allowedDomains) return true;
  const allowed = allowedDomains.split(',').map((d) => d.trim().toLowerCase()).filter(Boolean);
  return allowed.length === 0 || allowed.includes(domain);
}
