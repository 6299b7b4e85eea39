import { HttpStatus } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception';

/** Callback failure codes, the `error` of `/login?error=<code>` (docs/sso-login.md, "Redirect codes"). */
export type LoginErrorCode =
  | 'sso_error'
  | 'invalid_callback'
  | 'session_expired'
  | 'sso_config_changed'
  | 'sso_provider_inactive'
  | 'sso_email_unverified'
  | 'sso_domain_unverified'
  | 'domain_not_allowed'
  | 'user_not_found'
  | 'user_disabled'
  | 'no_org_access'
  | 'invite_required'
  | 'default_role_required'
  | 'invalid_provider_configuration'
  | 'identity_in_use';

/**
 * Self-linking failure codes, `/settings/profile?ssoLinkError=<code>` (docs/sso-login.md), plus
 * sso_error for a failed round trip with the IdP, which has no linking code of its own.
 */
export type LinkErrorCode = 'email_mismatch' | 'identity_in_use' | 'user_gone' | 'session_invalid' | 'config_changed' | 'sso_error';

/**
 * A refused sign-in: the public code goes in the redirect, the precise reason only in the
 * audit row. Thrown by the steps of the sign-in pipeline, which audits and answers it.
 */
export class LoginRejection extends Error {
  constructor(
    readonly code: LoginErrorCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A refused self-service link, thrown by IdentityLinkerService inside the pipeline's transaction. */
export class LinkRejection extends Error {
  constructor(
    readonly code: LinkErrorCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** How a refusal shared by both flows reads on the profile page. */
export function asLinkRejection(r: LoginRejection | LinkRejection): LinkRejection {
  if (r instanceof LinkRejection) return r;
  switch (r.code) {
    case 'sso_email_unverified':
    case 'domain_not_allowed':
      return new LinkRejection('email_mismatch', r.reason);
    case 'sso_config_changed':
    case 'sso_provider_inactive':
    case 'invalid_provider_configuration':
      return new LinkRejection('config_changed', r.reason);
    case 'identity_in_use':
      return new LinkRejection('identity_in_use', r.reason);
    default:
      return new LinkRejection('sso_error', r.reason);
  }
}

export const SsoLoginErrors = {
  noActiveProvider: (owner: 'organization' | 'partner') => AppException.notFound(`No active SSO provider for this ${owner}`),
  incompleteProvider: (missing: string[]) =>
    new AppException(
      HttpStatus.BAD_REQUEST,
      'invalid_provider_configuration',
      'The SSO provider is not fully configured, so sign-in cannot start; an administrator must complete it',
      { missing },
    ),
  unsafeEndpoint: (reason: string) =>
    new AppException(
      HttpStatus.BAD_REQUEST,
      'invalid_provider_configuration',
      'An endpoint of the SSO provider is not acceptable (https on a public address is required); an administrator must fix it',
      { reason },
    ),
  samlProvider: (loginUrl: string) =>
    AppException.badRequest('sso_protocol_unsupported', 'The SSO provider uses SAML; start the sign-in at its SAML login route', { loginUrl }),
  invalidExchangeCode: () => AppException.badRequest('invalid_exchange_code', 'Invalid or expired token exchange code'),
  linkProviderNotFound: () => AppException.notFound('SSO provider not found'),
  logoutNeedsUserSession: () => AppException.forbidden('forbidden', 'Signing out needs a signed-in user session'),
  logoutProviderNotFound: () => AppException.notFound('SSO provider not found'),
  invalidLogoutToken: () => AppException.badRequest('invalid_logout_token', 'The logout token is not acceptable'),
  linkNeedsUserSession: () => AppException.forbidden('forbidden', 'Linking an identity needs a signed-in user session'),
};
