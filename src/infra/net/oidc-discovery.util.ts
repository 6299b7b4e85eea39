import { DiscoveryError, OidcEndpointName, SafeFetchError } from './net.errors';
import { SafeFetchService } from './safe-fetch.service';

export interface DiscoveredOidcEndpoints {
  /** The issuer exactly as the document states it: the value ID tokens will carry. */
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  jwksUrl: string;
}

/** Column size of the issuer and endpoint URLs (spec 8). */
export const MAX_OIDC_URL_LENGTH = 500;

const ENDPOINTS: readonly OidcEndpointName[] = ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'];

/**
 * Reads `<issuer>/.well-known/openid-configuration` through the safe client and returns
 * the four endpoints the login flow needs, each one checked like the issuer itself
 * (https, public addresses only) so that a hostile document cannot point later calls
 * at an internal host. Every failure is a DiscoveryError whose message never quotes the
 * document.
 */
export async function discoverOidc(client: SafeFetchService, issuer: string): Promise<DiscoveredOidcEndpoints> {
  assertIssuerShape(issuer);
  const base = withoutTrailingSlash(issuer);

  let document: unknown;
  try {
    document = await client.fetchJson(`${base}/.well-known/openid-configuration`);
  } catch (error) {
    if (error instanceof SafeFetchError) {
      throw new DiscoveryError(error.reason, `Discovery failed: ${error.message}`, undefined, { cause: error });
    }
    throw error;
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new DiscoveryError('invalid_document', 'The discovery document is not a JSON object');
  }
  const fields = document as Record<string, unknown>;

  const documentIssuer = fields.issuer;
  if (typeof documentIssuer !== 'string' || withoutTrailingSlash(documentIssuer) !== base) {
    throw new DiscoveryError('issuer_mismatch', 'The discovery document names a different issuer');
  }
  if (documentIssuer.length > MAX_OIDC_URL_LENGTH) {
    throw new DiscoveryError('invalid_issuer', `The issuer is longer than ${MAX_OIDC_URL_LENGTH} characters`);
  }

  const urls = ENDPOINTS.map((field) => {
    const value = fields[field];
    if (typeof value !== 'string' || value === '') {
      throw new DiscoveryError('missing_endpoint', `The discovery document has no ${field}`, field);
    }
    if (value.length > MAX_OIDC_URL_LENGTH) {
      throw new DiscoveryError('endpoint_too_long', `The ${field} is longer than ${MAX_OIDC_URL_LENGTH} characters`, field);
    }
    return value;
  });

  await Promise.all(
    ENDPOINTS.map(async (field, index) => {
      try {
        await client.assertSafeUrl(urls[index]);
      } catch (error) {
        if (error instanceof SafeFetchError) {
          throw new DiscoveryError(error.reason, `The ${field} is not acceptable: ${error.message}`, field, {
            cause: error,
          });
        }
        throw error;
      }
    }),
  );

  const [authorizationUrl, tokenUrl, userInfoUrl, jwksUrl] = urls;
  return { issuer: documentIssuer, authorizationUrl, tokenUrl, userInfoUrl, jwksUrl };
}

/** OpenID Connect Discovery §2: an issuer is a URL without query or fragment. */
function assertIssuerShape(issuer: string): void {
  if (typeof issuer !== 'string' || issuer.length > MAX_OIDC_URL_LENGTH) {
    throw new DiscoveryError('invalid_issuer', `The issuer must be a URL of at most ${MAX_OIDC_URL_LENGTH} characters`);
  }
  let parsed: URL;
  try {
    parsed = new URL(issuer);
  } catch {
    throw new DiscoveryError('invalid_issuer', 'The issuer is not a valid URL');
  }
  if (parsed.search !== '' || parsed.hash !== '' || issuer.includes('?') || issuer.includes('#')) {
    throw new DiscoveryError('invalid_issuer', 'The issuer must not have a query or fragment');
  }
}

function withoutTrailingSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}
