import { AppException } from '../../../common/errors/app.exception';

/** Errors of the SAML routes that answer with JSON (the error body of docs/api-conventions.md); the ACS only redirects. */
export const SamlErrors = {
  providerNotFound: () => AppException.notFound('SAML provider not found'),
  sloUrlUnacceptable: () => AppException.badRequest('invalid_endpoint', 'The Single Logout URL must be an https URL without credentials'),
  oidcProvider: (loginUrl: string) =>
    AppException.badRequest('sso_protocol_unsupported', 'The SSO provider uses OIDC; start the sign-in at its OIDC login route', { loginUrl }),
  metadataImportFailed: (reason: string, message: string) => AppException.badRequest('saml_metadata_invalid', message, { reason }),
};
