import { Injectable } from '@nestjs/common';
import { DiscoveryError, OidcEndpointName, SafeFetchError } from '../../../infra/net/net.errors';
import { DiscoveredOidcEndpoints, discoverOidc } from '../../../infra/net/oidc-discovery.util';
import { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import type { EndpointField } from './oidc-endpoint-fields';
import { IdpNetworkService } from './idp-network.service';

const DOCUMENT_FIELD: Record<EndpointField, OidcEndpointName> = {
  authorizationUrl: 'authorization_endpoint',
  tokenUrl: 'token_endpoint',
  userInfoUrl: 'userinfo_endpoint',
  jwksUrl: 'jwks_uri',
};

export type OidcEndpoints = Pick<DiscoveredOidcEndpoints, 'authorizationUrl' | 'tokenUrl' | 'userInfoUrl' | 'jwksUrl'>;

/**
 * Spec 1.2.5 for providers: discovery of an issuer's endpoints and the re-validation of
 * endpoints already stored. Every method makes network calls: never call one while a
 * database transaction is open.
 */
@Injectable()
export class ProviderDiscoveryService {
  constructor(private readonly network: IdpNetworkService) {}

  /** The safe client, for the sign-in flow's token, UserInfo and JWKS requests. */
  get http(): SafeFetchService {
    return this.network.http;
  }

  /** Fetches `<issuer>/.well-known/openid-configuration`; throws DiscoveryError on any failure. */
  discover(issuer: string): Promise<DiscoveredOidcEndpoints> {
    return discoverOidc(this.network.http, issuer);
  }

  /**
   * Checks stored (or administrator-typed) endpoints against the same rules discovery
   * applies: https only, every resolved address public. Throws DiscoveryError naming the
   * first endpoint at fault. The sign-in flow calls this before each login, because a
   * host's DNS can change after it was saved.
   */
  async assertSafeEndpoints(endpoints: Partial<Record<EndpointField, string | null>>): Promise<void> {
    const entries = (Object.keys(DOCUMENT_FIELD) as EndpointField[])
      .map((field) => [field, endpoints[field]] as const)
      .filter((entry): entry is readonly [EndpointField, string] => typeof entry[1] === 'string' && entry[1] !== '');
    for (const [field, url] of entries) {
      try {
        await this.network.http.assertSafeUrl(url);
      } catch (error) {
        if (error instanceof SafeFetchError) {
          throw new DiscoveryError(error.reason, `${field} is not acceptable: ${error.message}`, DOCUMENT_FIELD[field], { cause: error });
        }
        throw error;
      }
    }
  }

  /**
   * Whether an HTTP server answers at `url` (SAML SSO URLs, which are not JSON documents):
   * any HTTP status, including a redirect the client refuses to follow, counts as an answer.
   */
  async probe(url: string): Promise<{ reachable: true } | { reachable: false; error: SafeFetchError }> {
    try {
      await this.network.http.request(url, { maxBytes: 64 * 1024 });
      return { reachable: true };
    } catch (error) {
      if (error instanceof SafeFetchError) {
        if (error.reason === 'redirect' || error.reason === 'too_large') return { reachable: true };
        return { reachable: false, error };
      }
      throw error;
    }
  }
}
