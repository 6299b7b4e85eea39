import { Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { SafeFetchError } from '../../../infra/net/net.errors';
import { MAX_OIDC_URL_LENGTH } from '../../../infra/net/oidc-discovery.util';
import { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import { OIDC_HTTP } from './oidc-relying-party.service';

/** What the sign-in and sign-out flows read from an identity provider's discovery document. */
export interface OidcProviderMetadata {
  /** RFC 9207 `authorization_response_iss_parameter_supported`: the callback must then carry `iss` (one that is present is checked either way). */
  issParameterSupported: boolean;
  /** RP-Initiated Logout 1.0 `end_session_endpoint`; null when the provider publishes none. */
  endSessionUrl: string | null;
}

const UNKNOWN: OidcProviderMetadata = { issParameterSupported: false, endSessionUrl: null };
const TTL_MS = 10 * 60_000;
/** A document that could not be read is asked for again after this long, not at every sign-in. */
const FAILURE_TTL_MS = 60_000;

interface Cached {
  metadata: OidcProviderMetadata;
  fetchedAt: number;
  ttl: number;
}

/**
 * The provider metadata the stored endpoints leave out, read from `<issuer>/.well-known/openid-configuration`
 * through the safe HTTP client and kept 10 minutes per issuer. A document that cannot be read, or that names
 * another issuer, keeps the last one read; with none read yet the provider counts as advertising neither
 * feature (no `iss` required, no end-session endpoint), which is what a provider without discovery gets too.
 */
@Injectable()
export class OidcProviderMetadataService {
  private readonly logger = new Logger(OidcProviderMetadataService.name);
  private readonly cache = new LRUCache<string, Cached>({ max: 1000 });

  constructor(@Inject(OIDC_HTTP) private readonly http: SafeFetchService) {}

  async of(issuer: string): Promise<OidcProviderMetadata> {
    const cached = this.cache.get(issuer);
    if (cached && Date.now() - cached.fetchedAt < cached.ttl) return cached.metadata;
    const read = await this.read(issuer);
    const metadata = read ?? cached?.metadata ?? UNKNOWN;
    this.cache.set(issuer, { metadata, fetchedAt: Date.now(), ttl: read ? TTL_MS : FAILURE_TTL_MS });
    return metadata;
  }

  private async read(issuer: string): Promise<OidcProviderMetadata | null> {
    const base = issuer.endsWith('/') ? issuer.slice(0, -1) : issuer;
    let document: unknown;
    try {
      document = await this.http.fetchJson(`${base}/.well-known/openid-configuration`);
    } catch (error) {
      if (!(error instanceof SafeFetchError)) throw error;
      this.logger.warn({ issuer, reason: error.reason }, 'The discovery document of an OIDC provider could not be read');
      return null;
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document)) return null;
    const fields = document as Record<string, unknown>;
    const named = typeof fields.issuer === 'string' && (fields.issuer.endsWith('/') ? fields.issuer.slice(0, -1) : fields.issuer) === base;
    if (!named) {
      this.logger.warn({ issuer }, 'The discovery document of an OIDC provider names another issuer; ignored');
      return null;
    }
    const endSession = fields.end_session_endpoint;
    return {
      issParameterSupported: fields.authorization_response_iss_parameter_supported === true,
      endSessionUrl: typeof endSession === 'string' && endSession !== '' && endSession.length <= MAX_OIDC_URL_LENGTH ? endSession : null,
    };
  }
}
