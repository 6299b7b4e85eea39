import type { OidcClientConfig } from './oidc-relying-party.service';
import type { LoginProviderRow } from './sso-login.repository';

export const DEFAULT_SCOPES = 'openid profile email';

/**
 * The client configuration of a provider, or the API names of the fields it lacks (spec 7:
 * a provider without clientId, clientSecret or issuer cannot start a login). The secret is
 * opened by the caller's `openSecret`, only when everything else is present.
 */
export function oidcClientConfig(
  provider: LoginProviderRow,
  openSecret: (sealed: string) => string,
): { config: OidcClientConfig } | { missing: string[] } {
  const required: [string, string | null][] = [
    ['issuer', provider.issuer],
    ['clientId', provider.client_id],
    ['clientSecret', provider.client_secret],
    ['authorizationUrl', provider.authorization_url],
    ['tokenUrl', provider.token_url],
    ['userInfoUrl', provider.userinfo_url],
    ['jwksUrl', provider.jwks_url],
  ];
  const missing = required.filter(([, value]) => !value).map(([field]) => field);
  if (provider.type !== 'oidc') missing.unshift('type');
  if (missing.length > 0) return { missing };
  return {
    config: {
      issuer: provider.issuer!,
      clientId: provider.client_id!,
      clientSecret: openSecret(provider.client_secret!),
      authorizationUrl: provider.authorization_url!,
      tokenUrl: provider.token_url!,
      userInfoUrl: provider.userinfo_url!,
      jwksUrl: provider.jwks_url!,
      scopes: provider.scopes || DEFAULT_SCOPES,
    },
  };
}

/** The tenant a provider (and every row about its sign-ins) belongs to. */
export function ownerOf(provider: Pick<LoginProviderRow, 'org_id' | 'partner_id'>): { orgId: string | null; partnerId: string | null } {
  return { orgId: provider.org_id, partnerId: provider.partner_id };
}

/** Whether the provider could start an OIDC login at all, judged without opening its secret. */
export function canStartOidcLogin(provider: LoginProviderRow): boolean {
  return (
    provider.type === 'oidc' &&
    [provider.issuer, provider.client_id, provider.client_secret, provider.authorization_url, provider.token_url, provider.userinfo_url, provider.jwks_url].every(
      (value) => !!value,
    )
  );
}
