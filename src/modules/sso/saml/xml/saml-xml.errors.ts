/**
 * Failure codes of the SAML XML building blocks. The service maps any of them to its
 * `invalid_provider_configuration` answer; the code and message are for logs and for the
 * administrator who pasted the metadata, never for a login redirect.
 */
export type SamlXmlErrorCode =
  | 'malformed_xml'
  | 'doctype_forbidden'
  | 'invalid_input'
  | 'not_idp_metadata'
  | 'missing_entity_id'
  | 'missing_sso_url'
  | 'missing_signing_certificate'
  | 'invalid_certificate';

export class SamlXmlError extends Error {
  override readonly name = 'SamlXmlError';

  constructor(
    readonly code: SamlXmlErrorCode,
    message: string,
  ) {
    super(message);
  }
}
