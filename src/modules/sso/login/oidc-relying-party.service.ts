import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, errors as joseErrors, JSONWebKeySet, jwtVerify, JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { randomToken } from '../../../infra/crypto/secret-box.service';
import { SafeFetchError } from '../../../infra/net/net.errors';
import { SafeFetchService, SafeResponse } from '../../../infra/net/safe-fetch.service';

export const OIDC_HTTP = Symbol('OIDC_HTTP');

/** What one provider needs to run a code flow; every field present and checked by the caller. */
export interface OidcClientConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  jwksUrl: string;
  scopes: string;
}

export interface OidcAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface VerifiedOidcLogin {
  sub: string;
  idTokenClaims: Record<string, unknown>;
  /** The ID token as the IdP signed it: sent back as `id_token_hint` by an RP-initiated logout. */
  idToken: string;
  userInfo: Record<string, unknown>;
  accessToken: string;
  refreshToken: string | null;
  tokenExpiresAt: Date | null;
}

/**
 * A protocol failure with a reason for the audit trail. The reason is one of a closed set of
 * snake_case words built here; nothing the IdP or a library wrote is ever put in it.
 */
export class OidcProtocolError extends Error {
  override readonly name = 'OidcProtocolError';
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Asymmetric JWS algorithms only: an HMAC keyed with the client secret proves nothing about the IdP. */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_SKEW_SECONDS = 60;
/** A login session lives 10 minutes, so an ID token issued earlier than that is not from this login. */
const MAX_ID_TOKEN_AGE_SECONDS = 600;
const JWKS_TTL_MS = 10 * 60_000;
/** A key id the cached set lacks triggers one refetch, at most this often (a key rotation). */
const JWKS_REFETCH_AFTER_MS = 30_000;
const MAX_SUB_LENGTH = 255;
/** Back-Channel Logout 1.0 §2.6: a logout token issued longer ago than this is refused. */
export const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300;
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The claims of a verified logout token that say whose sessions end. */
export interface VerifiedLogoutToken {
  jti: string;
  sub: string | null;
  sid: string | null;
  /** When the token stops being valid: its `exp`, or `iat` plus the accepted age. */
  expiresAt: Date;
}
const OAUTH_ERROR = /^[a-z_]{1,40}$/;

interface CachedJwks {
  getKey: JWTVerifyGetKey;
  fetchedAt: number;
}

/**
 * The OIDC relying party: Authorization Code with S256 PKCE (RFC 7636) and nonce, driven
 * directly over the safe HTTP client, with the ID token verified by jose against the
 * provider's JWKS (signature, iss, aud, azp, exp and iat with a small skew, nonce), and the
 * UserInfo subject compared with the ID token's. See docs/sso-login.md for why this is not
 * passport-openidconnect.
 */
@Injectable()
export class OidcRelyingPartyService {
  /** Key sets of the providers signed in with lately; one not used among the last 1,000 is fetched again. */
  private readonly jwks = new LRUCache<string, CachedJwks>({ max: 1000 });

  constructor(@Inject(OIDC_HTTP) private readonly http: SafeFetchService) {}

  newAttempt(): OidcAttempt {
    return { state: randomToken(32), nonce: randomToken(32), codeVerifier: randomToken(48) };
  }

  static codeChallenge(codeVerifier: string): string {
    return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
  }

  authorizationUrl(config: OidcClientConfig, attempt: OidcAttempt, redirectUri: string): string {
    const url = new URL(config.authorizationUrl);
    const scopes = config.scopes.split(' ').filter(Boolean);
    if (!scopes.includes('openid')) scopes.unshift('openid');
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: config.clientId,
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      state: attempt.state,
      nonce: attempt.nonce,
      code_challenge: OidcRelyingPartyService.codeChallenge(attempt.codeVerifier),
      code_challenge_method: 'S256',
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.toString();
  }

  /**
   * Spec 1.2.5: stored endpoints are re-checked (https, public addresses) before a browser is
   * sent anywhere. Throws OidcProtocolError naming the endpoint at fault.
   */
  async assertEndpointsSafe(config: OidcClientConfig): Promise<void> {
    const endpoints: [string, string][] = [
      ['authorization_endpoint', config.authorizationUrl],
      ['token_endpoint', config.tokenUrl],
      ['userinfo_endpoint', config.userInfoUrl],
      ['jwks_uri', config.jwksUrl],
    ];
    await Promise.all(
      endpoints.map(async ([name, url]) => {
        try {
          await this.http.assertSafeUrl(url);
        } catch (error) {
          if (error instanceof SafeFetchError) throw new OidcProtocolError(`${name}_${error.reason}`);
          throw error;
        }
      }),
    );
  }

  /** Steps 1.1.8–1.1.10: code exchange with the PKCE verifier, ID-token checks, UserInfo. */
  async completeLogin(config: OidcClientConfig, input: { code: string; codeVerifier: string; nonce: string; redirectUri: string }): Promise<VerifiedOidcLogin> {
    const tokens = await this.exchangeCode(config, input.code, input.codeVerifier, input.redirectUri);
    const idTokenClaims = await this.verifyIdToken(config, tokens.idToken, input.nonce);
    const sub = idTokenClaims.sub as string;
    const userInfo = await this.fetchUserInfo(config, tokens.accessToken);
    if (userInfo.sub !== sub) throw new OidcProtocolError('userinfo_sub_mismatch');
    return {
      sub,
      idTokenClaims,
      idToken: tokens.idToken,
      userInfo,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      tokenExpiresAt: tokens.expiresIn === null ? null : new Date(Date.now() + tokens.expiresIn * 1000),
    };
  }

  /**
   * OpenID Connect Back-Channel Logout 1.0 §2.6: signature by the provider's JWKS (asymmetric
   * algorithms only), `iss`, `aud` (the client id), `iat` no older than 5 minutes (60 s skew),
   * `exp` when present, a `jti`, the back-channel logout event, `sid` or `sub`, and no `nonce`
   * (which tells a logout token from an ID token). Replay of the `jti` is the caller's check.
   */
  async verifyLogoutToken(config: OidcClientConfig, logoutToken: string): Promise<VerifiedLogoutToken> {
    let payload: Record<string, unknown>;
    try {
      payload = await this.verifyWithJwks(config, logoutToken, {
        maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS + CLOCK_SKEW_SECONDS,
        requiredClaims: ['iss', 'aud', 'iat', 'jti', 'events'],
      });
    } catch (error) {
      throw error instanceof OidcProtocolError ? error : new OidcProtocolError(jwtFailure('logout_token', error));
    }
    if ('nonce' in payload) throw new OidcProtocolError('logout_token_nonce_present');
    const events = payload.events;
    const event = typeof events === 'object' && events !== null && !Array.isArray(events) ? (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT] : undefined;
    if (typeof event !== 'object' || event === null || Array.isArray(event)) throw new OidcProtocolError('logout_token_event_missing');
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== undefined && payload.azp !== config.clientId) throw new OidcProtocolError('logout_token_azp_mismatch');
    const text = (value: unknown, claim: string): string | null => {
      if (value === undefined) return null;
      if (typeof value !== 'string' || value === '' || value.length > MAX_SUB_LENGTH) throw new OidcProtocolError(`logout_token_${claim}_invalid`);
      return value;
    };
    const jti = text(payload.jti, 'jti')!;
    const sub = text(payload.sub, 'sub');
    const sid = text(payload.sid, 'sid');
    if (sub === null && sid === null) throw new OidcProtocolError('logout_token_sub_and_sid_missing');
    const iat = payload.iat as number;
    const exp = typeof payload.exp === 'number' ? payload.exp : iat + LOGOUT_TOKEN_MAX_AGE_SECONDS;
    return { jti, sub, sid, expiresAt: new Date((Math.max(exp, iat + LOGOUT_TOKEN_MAX_AGE_SECONDS) + CLOCK_SKEW_SECONDS) * 1000) };
  }

  private async exchangeCode(config: OidcClientConfig, code: string, codeVerifier: string, redirectUri: string) {
    // RFC 6749 §2.3.1: client_secret_basic, each part form-encoded before base64.
    const basic = Buffer.from(`${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`).toString('base64');
    const response = await this.call('token_endpoint', () =>
      this.http.request(config.tokenUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, accept: 'application/json' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: codeVerifier }),
      }),
    );
    const body = parseJsonObject(response);
    if (response.status !== 200) {
      const oauthError = typeof body?.error === 'string' && OAUTH_ERROR.test(body.error) ? `_${body.error}` : '';
      throw new OidcProtocolError(`token_endpoint_http_${response.status}${oauthError}`);
    }
    if (!body) throw new OidcProtocolError('token_response_invalid');
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new OidcProtocolError('token_response_no_access_token');
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') throw new OidcProtocolError('token_response_not_bearer');
    if (typeof body.id_token !== 'string' || body.id_token === '') throw new OidcProtocolError('id_token_missing');
    const expiresIn = typeof body.expires_in === 'number' && Number.isFinite(body.expires_in) && body.expires_in > 0 ? body.expires_in : null;
    return {
      accessToken: body.access_token,
      idToken: body.id_token,
      refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
      expiresIn,
    };
  }

  private async verifyIdToken(config: OidcClientConfig, idToken: string, nonce: string): Promise<Record<string, unknown>> {
    let payload: Record<string, unknown>;
    try {
      payload = await this.verifyWithJwks(config, idToken);
    } catch (error) {
      throw error instanceof OidcProtocolError ? error : new OidcProtocolError(jwtFailure('id_token', error));
    }
    if (payload.nonce !== nonce) throw new OidcProtocolError('id_token_nonce_mismatch');
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp === undefined) throw new OidcProtocolError('id_token_azp_missing');
    if (payload.azp !== undefined && payload.azp !== config.clientId) throw new OidcProtocolError('id_token_azp_mismatch');
    if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > MAX_SUB_LENGTH) throw new OidcProtocolError('id_token_sub_invalid');
    return payload;
  }

  private async verifyWithJwks(
    config: OidcClientConfig,
    idToken: string,
    checks: { maxTokenAge: number; requiredClaims: string[] } = {
      maxTokenAge: MAX_ID_TOKEN_AGE_SECONDS + CLOCK_SKEW_SECONDS,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    },
  ): Promise<Record<string, unknown>> {
    const options = {
      algorithms: ID_TOKEN_ALGORITHMS,
      issuer: config.issuer,
      audience: config.clientId,
      clockTolerance: CLOCK_SKEW_SECONDS,
      ...checks,
    };
    const cached = await this.keySet(config.jwksUrl, false);
    try {
      return (await jwtVerify(idToken, cached.getKey, options)).payload as Record<string, unknown>;
    } catch (error) {
      const unknownKey = error instanceof joseErrors.JWKSNoMatchingKey;
      if (!unknownKey || Date.now() - cached.fetchedAt < JWKS_REFETCH_AFTER_MS) throw error;
      const fresh = await this.keySet(config.jwksUrl, true);
      return (await jwtVerify(idToken, fresh.getKey, options)).payload as Record<string, unknown>;
    }
  }

  private async keySet(jwksUrl: string, refresh: boolean): Promise<CachedJwks> {
    const cached = this.jwks.get(jwksUrl);
    if (cached && !refresh && Date.now() - cached.fetchedAt < JWKS_TTL_MS) return cached;
    const response = await this.call('jwks', () => this.http.request(jwksUrl, { headers: { accept: 'application/json' } }));
    const body = parseJsonObject(response);
    if (response.status !== 200 || !body || !Array.isArray(body.keys)) throw new OidcProtocolError('jwks_invalid');
    let getKey: JWTVerifyGetKey;
    try {
      getKey = createLocalJWKSet(body as unknown as JSONWebKeySet);
    } catch {
      throw new OidcProtocolError('jwks_invalid');
    }
    const entry = { getKey, fetchedAt: Date.now() };
    this.jwks.set(jwksUrl, entry);
    return entry;
  }

  private async fetchUserInfo(config: OidcClientConfig, accessToken: string): Promise<Record<string, unknown>> {
    const response = await this.call('userinfo_endpoint', () =>
      this.http.request(config.userInfoUrl, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } }),
    );
    if (response.status !== 200) throw new OidcProtocolError(`userinfo_endpoint_http_${response.status}`);
    const body = parseJsonObject(response);
    if (!body) throw new OidcProtocolError('userinfo_response_invalid');
    return body;
  }

  private async call(step: string, fn: () => Promise<SafeResponse>): Promise<SafeResponse> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof SafeFetchError) throw new OidcProtocolError(`${step}_${error.reason}`);
      throw error;
    }
  }
}

function parseJsonObject(response: SafeResponse): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(response.body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function jwtFailure(token: 'id_token' | 'logout_token', error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return `${token}_expired`;
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = /^[a-z_]{1,20}$/.test(error.claim) ? error.claim : 'claim';
    return `${token}_${claim}_invalid`;
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return `${token}_alg_not_allowed`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return `${token}_signature_invalid`;
  if (error instanceof joseErrors.JWKSNoMatchingKey) return `${token}_key_unknown`;
  if (error instanceof joseErrors.JWKSMultipleMatchingKeys) return `${token}_key_ambiguous`;
  if (error instanceof joseErrors.JOSEError) return `${token}_malformed`;
  throw error;
}
