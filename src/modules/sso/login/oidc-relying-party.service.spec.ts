import { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import { RogueMode, RogueOidcIdp, startRogueOidcIdp } from '../../../../test/support/idp/rogue-oidc-idp';
import { OidcClientConfig, OidcProtocolError, OidcRelyingPartyService } from './oidc-relying-party.service';

const REDIRECT_URI = 'http://localhost:3000/api/v1/sso/callback';

describe('OidcRelyingPartyService against a misbehaving IdP', () => {
  let idp: RogueOidcIdp;
  let config: OidcClientConfig;
  const http = new SafeFetchService({
    resolver: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
    allowInsecureLoopback: true,
    timeoutMs: 1000,
  });

  beforeAll(async () => {
    idp = await startRogueOidcIdp();
    config = {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      authorizationUrl: idp.authorizationEndpoint,
      tokenUrl: idp.tokenEndpoint,
      userInfoUrl: idp.userinfoEndpoint,
      jwksUrl: idp.jwksUrl,
      scopes: 'openid profile email',
    };
  });
  afterAll(() => idp.stop());

  /** Runs the authorization step at the IdP (it answers with a code at once) and the RP's completion. */
  async function login(rp: OidcRelyingPartyService) {
    const attempt = rp.newAttempt();
    const authorize = await fetch(rp.authorizationUrl(config, attempt, REDIRECT_URI), { redirect: 'manual' });
    const back = new URL(authorize.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe(attempt.state);
    const result = await rp.completeLogin(config, { code: back.searchParams.get('code')!, codeVerifier: attempt.codeVerifier, nonce: attempt.nonce, redirectUri: REDIRECT_URI });
    return { attempt, result };
  }

  async function failureOf(mode: RogueMode): Promise<string> {
    idp.setMode(mode, { delayMs: 1500 });
    try {
      await login(new OidcRelyingPartyService(http));
    } catch (error) {
      if (error instanceof OidcProtocolError) return error.reason;
      throw error;
    } finally {
      idp.setMode('ok');
    }
    throw new Error(`mode ${mode} was accepted`);
  }

  it('completes a well-behaved login: S256 challenge, verifier and nonce sent, claims verified', async () => {
    idp.setClaims({ sub: 'eve', email: 'eve@corp.example', amr: ['pwd', 'mfa'] });
    const rp = new OidcRelyingPartyService(http);
    const { attempt, result } = await login(rp);
    const authorize = idp.authorizeRequests.at(-1)!.params;
    expect(authorize).toMatchObject({ response_type: 'code', code_challenge_method: 'S256', code_challenge: OidcRelyingPartyService.codeChallenge(attempt.codeVerifier), nonce: attempt.nonce, scope: 'openid profile email' });
    const token = idp.tokenRequests.at(-1)!;
    expect(token).toMatchObject({ clientAuth: 'client_secret_basic', codeVerifier: attempt.codeVerifier, pkceValid: true, redirectUri: REDIRECT_URI });
    expect(result.sub).toBe('eve');
    expect(result.idTokenClaims.amr).toEqual(['pwd', 'mfa']);
    expect(result.userInfo.email).toBe('eve@corp.example');
    expect(result.tokenExpiresAt!.getTime()).toBeGreaterThan(Date.now());
  });

  it.each<[RogueMode, string]>([
    ['wrong_key', 'id_token_signature_invalid'],
    ['alg_none', 'id_token_alg_not_allowed'],
    ['hs256_client_secret', 'id_token_alg_not_allowed'],
    ['wrong_iss', 'id_token_iss_invalid'],
    ['wrong_aud', 'id_token_aud_invalid'],
    ['expired', 'id_token_expired'],
    ['nonce_mismatch', 'id_token_nonce_mismatch'],
    ['no_id_token', 'id_token_missing'],
    ['userinfo_sub_mismatch', 'userinfo_sub_mismatch'],
    ['token_500', 'token_endpoint_http_500_server_error'],
    ['token_down', 'token_endpoint_network'],
    ['slow_token', 'token_endpoint_timeout'],
  ])("refuses the IdP mode '%s' with reason %s", async (mode, reason) => {
    expect(await failureOf(mode)).toBe(reason);
  });

  it('refuses a wrong client secret with the OAuth error code only', async () => {
    const rp = new OidcRelyingPartyService(http);
    const attempt = rp.newAttempt();
    const authorize = await fetch(rp.authorizationUrl(config, attempt, REDIRECT_URI), { redirect: 'manual' });
    const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
    await expect(rp.completeLogin({ ...config, clientSecret: 'guess' }, { code, codeVerifier: attempt.codeVerifier, nonce: attempt.nonce, redirectUri: REDIRECT_URI })).rejects.toMatchObject({
      reason: 'token_endpoint_http_401_invalid_client',
    });
  });

  it('refuses endpoints that are not https outside loopback development mode', async () => {
    const strict = new OidcRelyingPartyService(new SafeFetchService({ resolver: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] } }));
    await expect(strict.assertEndpointsSafe(config)).rejects.toMatchObject({ reason: 'authorization_endpoint_insecure_scheme' });
    await expect(new OidcRelyingPartyService(http).assertEndpointsSafe(config)).resolves.toBeUndefined();
  });

  it('adds openid to the scopes when the provider left it out, and keeps the endpoint query', () => {
    const rp = new OidcRelyingPartyService(http);
    const url = new URL(rp.authorizationUrl({ ...config, authorizationUrl: `${idp.authorizationEndpoint}?tenant=x`, scopes: 'email' }, rp.newAttempt(), REDIRECT_URI));
    expect(url.searchParams.get('scope')).toBe('openid email');
    expect(url.searchParams.get('tenant')).toBe('x');
  });
});
