/**
 * A deliberately misbehaving OpenID Provider, in-process on 127.0.0.1 (random port), for
 * proving that the relying party refuses bad tokens. It speaks just enough OIDC to be
 * discovered and driven through a code flow; each test picks how it misbehaves:
 *
 *   const idp = await startRogueOidcIdp();
 *   // provider config: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }
 *   idp.setMode('alg_none');
 *   … drive the service's login: its redirect to idp.authorizationEndpoint answers 302 straight
 *     back to redirect_uri with a code and the state (no login step) …
 *   expect(callback.headers.location).toBe('/login?error=sso_error');
 *   expect(idp.tokenRequests[0].pkceValid).toBe(true);
 *   await idp.stop();
 *
 * The token endpoint authenticates the client (client_secret_basic or client_secret_post),
 * checks the code is unused and bound to the same redirect_uri, and verifies the PKCE S256
 * verifier against the challenge given at /authorize; failures answer `invalid_client` or
 * `invalid_grant` as a real OP would. Every token request is recorded first, whatever the mode.
 * The issuer is plain http on loopback, so the service needs SSO_ALLOW_INSECURE_LOOPBACK_IDP.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, UnsecuredJWT, exportJWK, generateKeyPair, type JWK, type KeyLike } from 'jose';

export type RogueMode =
  /** A valid RS256 ID token (iss, aud, exp, iat, nonce, sub, email, amr) and a matching userinfo. */
  | 'ok'
  /** RS256, with the JWKS key's kid, but signed by a key the JWKS does not hold. */
  | 'wrong_key'
  /** An unsecured JWT: `alg: none`, empty signature. */
  | 'alg_none'
  /** HS256 with the client secret as the HMAC key, where the RP expects RS256. */
  | 'hs256_client_secret'
  | 'wrong_iss'
  | 'wrong_aud'
  /** Issued two hours ago, expired an hour ago: beyond any reasonable clock skew. */
  | 'expired'
  | 'nonce_mismatch'
  /** A token response with an access token but no id_token. */
  | 'no_id_token'
  /** A valid ID token, but userinfo names another subject. */
  | 'userinfo_sub_mismatch'
  /** The token endpoint answers 500 `server_error`. */
  | 'token_500'
  /** The token endpoint destroys the connection without answering. */
  | 'token_down'
  /** A valid answer from the token endpoint, after `delayMs` (default 5000). */
  | 'slow_token';

export interface RogueTokenRequest {
  at: Date;
  /** Which client authentication the RP used; 'none' when it sent no credentials. */
  clientAuth: 'client_secret_basic' | 'client_secret_post' | 'none';
  clientId: string | null;
  grantType: string | null;
  code: string | null;
  redirectUri: string | null;
  codeVerifier: string | null;
  /** True when the verifier hashes (S256) to the challenge sent with this code's authorization request. */
  pkceValid: boolean;
  /** The raw form body, for anything else a test wants to check. */
  body: Record<string, string>;
}

export interface RogueAuthorizeRequest {
  at: Date;
  params: Record<string, string>;
}

export type RogueClaims = Record<string, unknown>;

export interface RogueOidcIdpOptions {
  clientId?: string;
  clientSecret?: string;
}

export interface RogueOidcIdp {
  /** `http://127.0.0.1:<port>`; discovery at `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  discoveryUrl: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  jwksUrl: string;
  clientId: string;
  clientSecret: string;
  /** Every token request received, oldest first. */
  tokenRequests: RogueTokenRequest[];
  /** Every authorization request received, oldest first (to check state, nonce and the PKCE challenge). */
  authorizeRequests: RogueAuthorizeRequest[];
  /** Applies to the next token and userinfo requests. */
  setMode(mode: RogueMode, options?: { delayMs?: number }): void;
  /**
   * Sets the identity served in the ID token and userinfo, on top of the defaults
   * (sub 'rogue-user', email, email_verified true, name, amr ['pwd']); a key set to undefined
   * is left out. Each call starts again from the defaults. `only` adds claims to one source
   * alone (a key set to undefined is left out of that source), for IdPs whose ID token and
   * userinfo disagree.
   */
  setClaims(claims: RogueClaims, only?: { idToken?: RogueClaims; userInfo?: RogueClaims }): void;
  stop(): Promise<void>;
}

const DEFAULT_CLAIMS: RogueClaims = {
  sub: 'rogue-user',
  email: 'user@rogue.example',
  email_verified: true,
  name: 'Rogue User',
  amr: ['pwd'],
};

const SIGNING_KID = 'rogue-rs256';
const PROTOCOL_CLAIMS = new Set(['amr', 'acr', 'auth_time']);

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  nonce: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  scope: string | null;
}

export async function startRogueOidcIdp(options: RogueOidcIdpOptions = {}): Promise<RogueOidcIdp> {
  const clientId = options.clientId ?? 'rogue-client';
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('base64url');
  const signing = await generateKeyPair('RS256');
  const impostor = await generateKeyPair('RS256');
  const publicJwk: JWK = { ...(await exportJWK(signing.publicKey)), kid: SIGNING_KID, alg: 'RS256', use: 'sig' };

  let mode: RogueMode = 'ok';
  let delayMs = 5_000;
  let claims: RogueClaims = { ...DEFAULT_CLAIMS };
  let idTokenOnly: RogueClaims = {};
  let userInfoOnly: RogueClaims = {};
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, RogueClaims>();
  const tokenRequests: RogueTokenRequest[] = [];
  const authorizeRequests: RogueAuthorizeRequest[] = [];
  /** Pending slow_token waits, so stop() can end them instead of leaving them hanging. */
  const sleepers = new Map<NodeJS.Timeout, () => void>();

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) {
        json(res, 500, { error: 'server_error', error_description: `rogue IdP bug: ${err.message}` });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const endpoints = {
    authorization: `${issuer}/authorize`,
    token: `${issuer}/token`,
    userinfo: `${issuer}/userinfo`,
    jwks: `${issuer}/jwks`,
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case 'GET /.well-known/openid-configuration':
        return json(res, 200, {
          issuer,
          authorization_endpoint: endpoints.authorization,
          token_endpoint: endpoints.token,
          userinfo_endpoint: endpoints.userinfo,
          jwks_uri: endpoints.jwks,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          scopes_supported: ['openid', 'profile', 'email', 'groups'],
          claims_supported: ['sub', 'email', 'email_verified', 'name', 'given_name', 'family_name', 'groups', 'amr'],
        });
      case 'GET /jwks':
        return json(res, 200, { keys: [publicJwk] });
      case 'GET /authorize':
        return authorize(url, res);
      case 'POST /token':
        return token(req, res);
      case 'GET /userinfo':
      case 'POST /userinfo':
        return userinfo(req, res);
      default:
        return json(res, 404, { error: 'not_found' });
    }
  }

  function authorize(url: URL, res: ServerResponse): void {
    const params = Object.fromEntries(url.searchParams);
    authorizeRequests.push({ at: new Date(), params });
    const redirectUri = params.redirect_uri;
    if (params.client_id !== clientId || !redirectUri) {
      return json(res, 400, { error: 'invalid_request', error_description: 'unknown client_id or missing redirect_uri' });
    }
    const code = randomBytes(24).toString('base64url');
    codes.set(code, {
      clientId,
      redirectUri,
      nonce: params.nonce ?? null,
      codeChallenge: params.code_challenge ?? null,
      codeChallengeMethod: params.code_challenge_method ?? null,
      scope: params.scope ?? null,
    });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (params.state !== undefined) {
      back.searchParams.set('state', params.state);
    }
    res.writeHead(302, { location: back.toString() }).end();
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = Object.fromEntries(new URLSearchParams(await readBody(req)));
    const auth = clientAuthentication(req, body);
    const code = body.code ?? null;
    const issued = code ? codes.get(code) : undefined;
    const codeVerifier = body.code_verifier ?? null;
    const pkceValid = !!issued && verifyPkce(issued, codeVerifier);
    tokenRequests.push({
      at: new Date(),
      clientAuth: auth.method,
      clientId: auth.clientId,
      grantType: body.grant_type ?? null,
      code,
      redirectUri: body.redirect_uri ?? null,
      codeVerifier,
      pkceValid,
      body,
    });

    const current = mode;
    if (current === 'token_down') {
      req.socket.destroy();
      return;
    }
    if (!auth.valid) {
      return json(res, 401, { error: 'invalid_client', error_description: 'client authentication failed' });
    }
    if (body.grant_type !== 'authorization_code') {
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (!code || !issued) {
      return json(res, 400, { error: 'invalid_grant', error_description: 'unknown or already used code' });
    }
    codes.delete(code);
    if (issued.redirectUri !== body.redirect_uri) {
      return json(res, 400, { error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });
    }
    if (!pkceValid) {
      return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
    }
    if (current === 'token_500') {
      return json(res, 500, { error: 'server_error', error_description: 'the rogue IdP is having a bad day' });
    }

    const identity = { ...claims };
    const accessToken = randomBytes(24).toString('base64url');
    accessTokens.set(accessToken, identity);
    const answer: Record<string, unknown> = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: issued.scope ?? 'openid',
    };
    if (current !== 'no_id_token') {
      answer.id_token = await idToken(current, identity, issued.nonce);
    }
    if (current === 'slow_token') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          sleepers.delete(timer);
          resolve();
        }, delayMs);
        sleepers.set(timer, resolve);
      });
      if (res.destroyed) {
        return;
      }
    }
    return json(res, 200, answer);
  }

  function userinfo(req: IncomingMessage, res: ServerResponse): void {
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const identity = bearer ? accessTokens.get(bearer) : undefined;
    if (!identity) {
      res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
      return json(res, 401, { error: 'invalid_token' });
    }
    const profile = overlay(
      Object.fromEntries(Object.entries(identity).filter(([key]) => !PROTOCOL_CLAIMS.has(key))),
      userInfoOnly,
    );
    if (mode === 'userinfo_sub_mismatch') {
      profile.sub = `${String(identity.sub)}-someone-else`;
    }
    return json(res, 200, profile);
  }

  async function idToken(current: RogueMode, identity: RogueClaims, nonce: string | null): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const payload: RogueClaims = {
      ...overlay(identity, idTokenOnly),
      iss: current === 'wrong_iss' ? 'https://evil.example' : issuer,
      aud: current === 'wrong_aud' ? 'some-other-client' : clientId,
      iat: current === 'expired' ? now - 7200 : now,
      exp: current === 'expired' ? now - 3600 : now + 300,
      ...(nonce !== null ? { nonce: current === 'nonce_mismatch' ? `not-${nonce}` : nonce } : {}),
    };
    switch (current) {
      case 'alg_none':
        return new UnsecuredJWT(payload).encode();
      case 'hs256_client_secret':
        return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(clientSecret));
      case 'wrong_key':
        return sign(payload, impostor.privateKey);
      default:
        return sign(payload, signing.privateKey);
    }
  }

  function sign(payload: RogueClaims, key: KeyLike): Promise<string> {
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: SIGNING_KID, typ: 'JWT' }).sign(key);
  }

  function clientAuthentication(
    req: IncomingMessage,
    body: Record<string, string>,
  ): { method: RogueTokenRequest['clientAuth']; clientId: string | null; valid: boolean } {
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (basic) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      // RFC 6749 §2.3.1: both parts are form-urlencoded before base64.
      const id = safeDecode(decoded.slice(0, colon === -1 ? undefined : colon));
      const secret = colon === -1 ? '' : safeDecode(decoded.slice(colon + 1));
      return { method: 'client_secret_basic', clientId: id, valid: id === clientId && sameSecret(secret) };
    }
    if (body.client_secret !== undefined) {
      const id = body.client_id ?? null;
      return { method: 'client_secret_post', clientId: id, valid: id === clientId && sameSecret(body.client_secret) };
    }
    return { method: 'none', clientId: body.client_id ?? null, valid: false };
  }

  function sameSecret(candidate: string): boolean {
    const a = createHash('sha256').update(candidate).digest();
    const b = createHash('sha256').update(clientSecret).digest();
    return timingSafeEqual(a, b);
  }

  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    authorizationEndpoint: endpoints.authorization,
    tokenEndpoint: endpoints.token,
    userinfoEndpoint: endpoints.userinfo,
    jwksUrl: endpoints.jwks,
    clientId,
    clientSecret,
    tokenRequests,
    authorizeRequests,
    setMode(next, modeOptions = {}) {
      mode = next;
      if (modeOptions.delayMs !== undefined) {
        delayMs = modeOptions.delayMs;
      }
    },
    setClaims(next, only = {}) {
      claims = Object.fromEntries(Object.entries({ ...DEFAULT_CLAIMS, ...next }).filter(([, value]) => value !== undefined));
      idTokenOnly = only.idToken ?? {};
      userInfoOnly = only.userInfo ?? {};
    },
    async stop() {
      server.closeAllConnections();
      for (const [timer, wake] of sleepers) {
        clearTimeout(timer);
        wake();
      }
      sleepers.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `base` with `extra` on top; a key of `extra` set to undefined removes it. */
function overlay(base: RogueClaims, extra: RogueClaims): RogueClaims {
  return Object.fromEntries(Object.entries({ ...base, ...extra }).filter(([, value]) => value !== undefined));
}

function verifyPkce(issued: IssuedCode, verifier: string | null): boolean {
  if (!verifier || !issued.codeChallenge || issued.codeChallengeMethod !== 'S256') {
    return false;
  }
  return createHash('sha256').update(verifier).digest('base64url') === issued.codeChallenge;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
