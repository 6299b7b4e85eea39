import request from 'supertest';
import type { RogueMode, RogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import type { TestApp } from '../../support/test-app';
import { browserlessAuthorize } from '../../support/idp/oidc-op';
import { auditOf, exchange, exchangeCodeOf, mintedThrough, rogueProviderWorld, roundTrip, startLogin, BOOT_TIMEOUT_MS } from './sso-login.kit';

/**
 * The service as a relying party facing an IdP that misbehaves on purpose: every bad answer
 * ends in /login?error=sso_error, mints nothing, and shows nothing of what went wrong beyond
 * the code; the precise reason is in the audit row.
 */
describe('OIDC relying party against a misbehaving IdP', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let ids: Record<string, string>;
  let provider: string;

  beforeAll(async () => {
    ({ t, idp, ids, provider } = await rogueProviderWorld());
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });
  afterEach(() => idp.setMode('ok'));

  it('signs in when the IdP behaves, sending the PKCE verifier with client_secret_basic (the control case)', async () => {
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
    expect(me.body.user.id).toBe(ids.adminA);
    const sent = idp.tokenRequests.at(-1)!;
    expect(sent).toMatchObject({ clientAuth: 'client_secret_basic', grantType: 'authorization_code', pkceValid: true, redirectUri: 'http://localhost:3000/api/v1/sso/callback' });
    expect(idp.authorizeRequests.at(-1)!.params.code_challenge_method).toBe('S256');
  });

  const modes: [RogueMode, string][] = [
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
  ];

  it.each(modes)("IdP mode '%s' ends in sso_error, mints nothing, and is audited as %s", async (mode, reason) => {
    idp.setMode(mode, { delayMs: 6_000 });
    const before = await mintedThrough(provider);
    const requestsBefore = idp.tokenRequests.length;
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);

    expect(cb.status).toBe(302);
    expect(cb.location).toBe('/login?error=sso_error');
    expect(await mintedThrough(provider)).toEqual(before);
    // The code was redeemed properly, so the failure is the IdP's answer, not the request.
    expect(idp.tokenRequests.length).toBe(requestsBefore + 1);
    expect(idp.tokenRequests.at(-1)!.pkceValid).toBe(true);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code: 'sso_error', reason });
  }, 20_000);

  it('answers a refused callback with a bare redirect that quotes nothing from the IdP or a library', async () => {
    idp.setMode('wrong_iss');
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    const idpRedirect = await browserlessAuthorize(started.location);
    const raw = await request(t.http).get(`/api/v1/sso/callback${new URL(idpRedirect).search}`).set('Cookie', started.cookie);
    expect(raw.status).toBe(302);
    expect(raw.headers.location).toBe('/login?error=sso_error');
    expect(raw.text).not.toMatch(/iss|claim|jose|JWT|evil\.example/i);
    expect(raw.headers['cache-control']).toBe('no-store');
  });
});
