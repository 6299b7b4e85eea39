/** Why an outbound call to an identity provider was refused or failed. */
export type SafeFetchReason =
  | 'invalid_url'
  | 'insecure_scheme'
  | 'private_address'
  | 'dns_failure'
  | 'timeout'
  | 'too_large'
  | 'http_status'
  | 'redirect'
  | 'invalid_json'
  | 'network';

/**
 * The message is written here, never taken from the remote side: it may reach an
 * administrator's screen or a log, and a response body could carry anything.
 */
export class SafeFetchError extends Error {
  override readonly name = 'SafeFetchError';
  /** The HTTP status, for `http_status` and `redirect`. */
  readonly status?: number;

  constructor(
    readonly reason: SafeFetchReason,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
  }
}

export type OidcEndpointName = 'authorization_endpoint' | 'token_endpoint' | 'userinfo_endpoint' | 'jwks_uri';

export type DiscoveryReason =
  | SafeFetchReason
  | 'invalid_issuer'
  | 'invalid_document'
  | 'issuer_mismatch'
  | 'missing_endpoint'
  | 'endpoint_too_long';

export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';

  constructor(
    readonly reason: DiscoveryReason,
    message: string,
    /** The document field at fault, when the failure concerns one endpoint. */
    readonly endpoint?: OidcEndpointName,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}
