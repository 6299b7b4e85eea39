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

/**
 * Reasons that describe the service's own network rather than the caller's input or an IdP's
 * answer: whether its resolver knows a name, whether the name points inside, whether a host
 * answers. Told apart, they let an administrator map the internal network through the
 * provider routes (issue 13, 14b), so callers get one reason for all of them and the server
 * log keeps the precise one.
 */
const NETWORK_REASONS: ReadonlySet<string> = new Set<SafeFetchReason>(['private_address', 'dns_failure', 'timeout', 'network']);

/** The one caller-visible reason of the network reasons above. */
export const ENDPOINT_UNAVAILABLE = 'endpoint_unavailable';

export const ENDPOINT_UNAVAILABLE_MESSAGE =
  'The address cannot be used: it must be an https URL whose host resolves only to public addresses and answers in time';

/**
 * What a caller may see of a refusal: network reasons collapse to `endpoint_unavailable` with
 * a fixed sentence; input and answer reasons (`insecure_scheme`, `issuer_mismatch`, …) stay.
 * A reason prefixed with the endpoint (`token_endpoint_private_address`) keeps its prefix.
 */
export function callerVisible(reason: string, message: string): { reason: string; message: string } {
  if (NETWORK_REASONS.has(reason)) return { reason: ENDPOINT_UNAVAILABLE, message: ENDPOINT_UNAVAILABLE_MESSAGE };
  for (const network of NETWORK_REASONS) {
    if (reason.endsWith(`_${network}`)) return { reason: `${reason.slice(0, -network.length - 1)}_unavailable`, message: ENDPOINT_UNAVAILABLE_MESSAGE };
  }
  return { reason, message };
}
