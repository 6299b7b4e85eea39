export type SsoProviderType = 'oidc' | 'saml';
export type SsoProviderStatus = 'active' | 'inactive' | 'testing';
export const SSO_PROVIDER_STATUSES: readonly SsoProviderStatus[] = ['active', 'inactive', 'testing'];

/** Spec 2.3: which IdP claim (OIDC) or attribute (SAML) holds each user field. */
export interface AttributeMapping {
  email: string;
  name: string;
  firstName?: string;
  lastName?: string;
  groups?: string;
}

export const DEFAULT_OIDC_SCOPES = 'openid profile email';
export const DEFAULT_ATTRIBUTE_MAPPING: AttributeMapping = { email: 'email', name: 'name' };

/** Exactly one of the two is set (database CHECK). */
export type SsoOwner = { orgId: string; partnerId: null } | { orgId: null; partnerId: string };

/** The configuration an administrator edits; every field may be absent on a provider. */
export interface SsoProviderConfig {
  name: string;
  issuer: string | null;
  clientId: string | null;
  authorizationUrl: string | null;
  tokenUrl: string | null;
  userInfoUrl: string | null;
  jwksUrl: string | null;
  scopes: string | null;
  entityId: string | null;
  ssoUrl: string | null;
  certificate: string | null;
  nameIdFormat: string | null;
  forceAuthn: boolean;
  attributeMapping: AttributeMapping;
  autoProvision: boolean;
  defaultRoleId: string | null;
  allowedDomains: string | null;
  enforceSSO: boolean;
  trustsIdpMfa: boolean;
}

/**
 * One stored provider, as the sign-in flows read it. The client secret stays sealed here:
 * `SsoProviderLookupService.clientSecret` opens it at the moment it is needed.
 */
export interface SsoProviderRecord extends SsoProviderConfig {
  id: string;
  orgId: string | null;
  partnerId: string | null;
  type: SsoProviderType;
  status: SsoProviderStatus;
  preset: string | null;
  clientSecretSealed: string | null;
  /** The administrator whose permissions must still cover defaultRoleId when a user is provisioned. */
  defaultRoleSetBy: string | null;
  /** Bumped by every configuration or status change; login sessions are bound to it. */
  generation: number;
  createdBy: string | null;
  updatedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** SecretBoxService context of a provider's client secret: the ciphertext only opens in its own row. */
export const clientSecretContext = (providerId: string): string => `sso_providers.client_secret:${providerId}`;

/**
 * The public start route of a protocol's sign-in for a provider's owner: the `loginUrl` that
 * `/sso/check` answers and that a start route of the other protocol refuses with (docs/sso-admin.md).
 */
export function loginPathFor(type: SsoProviderType, owner: { orgId?: string; partnerId?: string }): string {
  const routes = type === 'oidc' ? '/api/v1/sso/login' : '/api/v1/sso/saml/login';
  return owner.orgId ? `${routes}/${owner.orgId}` : `${routes}/partner/${owner.partnerId}`;
}
