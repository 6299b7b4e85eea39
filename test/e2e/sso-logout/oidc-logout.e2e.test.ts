import { randomUUID } from 'node:crypto';
import { generateKeyPair, SignJWT } from 'jose';
import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { CookieJar } from '../../support/idp/cookie-jar';
import { browserlessAuthorize, browserlessEndSession, OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, callback, CALLBACK_URL, exchange, exchangeCodeOf, insertProvider, opEndpoints, startLogin, startOp, verifyDomain } from '../sso-login/sso-login.kit';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const POST_LOGOUT_URL = 'http://localhost:3000/api/v1/sso/logout/callback';

/**
 * Sign-out that reaches every session, against the real OpenID Provider: RP-initiated logout (our
 * route ends the session and sends the browser to the OP's end_session_endpoint with id_token_hint)
 * and Back-Channel Logout 1.0 (the OP posts a signed logout token when its session ends; the
 * sessions it names end, refresh tokens included). The service listens on a real port so the OP can
 * reach it. Forged logout tokens are signed with the OP's own key where the signature must verify.
 */
describe('OIDC sign-out: RP-initiated and back-channel logout', () => {
  let t: TestApp;
  let op: OidcOpHandle;
  let ids: Record<string, string>;
  let email: string;
  /** Client with backchannel_logout_session_required: logout tokens name the OP session (sid). */
  let bySid: { provider: string; clientId: string };
  /** Client without it: logout tokens name the subject only. */
  let bySub: { provider: string; clientId: string };

  async function providerWithClient(clientId: string, sessionRequired: boolean) {
    const provider = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), clientId });
    await op.addClient({
      client_id: clientId,
      client_secret: opEndpoints(op).clientSecret!,
      redirect_uris: [CALLBACK_URL],
      post_logout_redirect_uris: [POST_LOGOUT_URL],
      backchannel_logout_uri: `${t.baseUrl}/api/v1/sso/logout/backchannel/${provider}`,
      backchannel_logout_session_required: sessionRequired,
    });
    return { provider, clientId };
  }

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp({}, { listen: true }), startOp()]);
    const f = tenantFixture();
    ids = await t.seed(f);
    email = f.emails.adminA;
    await verifyDomain(ids.orgA, email.split('@')[1]);
    bySid = await providerWithClient(`rmm-bcl-sid-${randomUUID().slice(0, 8)}`, true);
    bySub = await providerWithClient(`rmm-bcl-sub-${randomUUID().slice(0, 8)}`, false);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  /** A complete SSO sign-in of Admin A through `provider`'s OP client, the OP session kept in `jar`. */
  async function signIn(jar: CookieJar, provider: string, sub = 'admin-a-idp') {
    await op.setAccount(sub, { email, email_verified: true, name: 'Admin A' });
    await op.loginAs(sub);
    // The organization's oldest active provider is the one the login route uses: make `provider` it for this sign-in.
    await ownerQuery(`UPDATE sso_providers SET status = CASE WHEN id = $1 THEN 'active' ELSE 'testing' END WHERE org_id = $2`, [provider, ids.orgA]);
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(started.status).toBe(302);
    const cb = await callback(t, await browserlessAuthorize(started.location, { jar }), started.cookie);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    return pair.body as { accessToken: string; refreshToken: string };
  }

  const me = (accessToken: string) => request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`);
  const refresh = (refreshToken: string) => request(t.http).post('/api/v1/auth/refresh').send({ refreshToken });
  const backchannel = (provider: string, form: Record<string, string>) =>
    request(t.http).post(`/api/v1/sso/logout/backchannel/${provider}`).type('form').send(form);

  async function expectEnded(pair: { accessToken: string; refreshToken: string }) {
    await me(pair.accessToken).expect(401);
    expect((await refresh(pair.refreshToken).expect(401)).body.code).toBe('invalid_refresh_token');
  }

  /** The session id an access token carries (its `sid` claim). */
  function sessionOf(accessToken: string): string {
    return (JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()) as { sid: string }).sid;
  }

  it('records the OP session id, the subject and the sealed ID token of each OIDC sign-in', async () => {
    const pair = await signIn(new CookieJar(), bySid.provider);
    const sessionId = sessionOf(pair.accessToken);
    const [link] = await ownerQuery<{ protocol: string; subject: string; idp_session_id: string | null; id_token: string; provider_id: string }>(
      `SELECT protocol, subject, idp_session_id, id_token, provider_id FROM sso_session_links WHERE session_id = $1`,
      [sessionId],
    );
    expect(link).toMatchObject({ protocol: 'oidc', subject: 'admin-a-idp', provider_id: bySid.provider, idp_session_id: expect.any(String) });
    expect(link.id_token).toMatch(/^enc:v1:/);
  });

  it('RP-initiated logout ends the session at once and sends the browser to the OP with id_token_hint, our registered return and the return path', async () => {
    const jar = new CookieJar();
    const pair = await signIn(jar, bySid.provider);
    const res = await request(t.http).post('/api/v1/sso/logout').set('Authorization', `Bearer ${pair.accessToken}`).send({ redirect: '/devices?view=mine' }).expect(200);
    expect(res.body).toEqual({ success: true, logoutUrl: expect.any(String) });
    const url = new URL(res.body.logoutUrl);
    expect(`${url.origin}${url.pathname}`).toBe(op.endSessionEndpoint);
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(POST_LOGOUT_URL);
    expect(url.searchParams.get('state')).toBe('/devices?view=mine');
    expect(url.searchParams.get('client_id')).toBe(bySid.clientId);
    const hint = JSON.parse(Buffer.from(url.searchParams.get('id_token_hint')!.split('.')[1], 'base64url').toString());
    expect(hint).toMatchObject({ iss: op.issuer, aud: bySid.clientId, sub: 'admin-a-idp' });
    await expectEnded(pair);

    // The OP accepts the hint and the registered return, and sends the browser back with the state.
    const back = await browserlessEndSession(res.body.logoutUrl, jar);
    expect(back).toBe(`${POST_LOGOUT_URL}?state=${encodeURIComponent('/devices?view=mine')}`);
    const returned = await request(t.http).get(`/api/v1/sso/logout/callback${new URL(back).search}`).expect(302);
    expect(returned.headers.location).toBe('/devices?view=mine');
  });

  it('the return from the OP goes only to a path on this origin', async () => {
    for (const state of ['https://evil.example/x', '//evil.example', '/\\evil.example']) {
      const res = await request(t.http).get('/api/v1/sso/logout/callback').query({ state }).expect(302);
      expect(res.headers.location).toBe('/');
    }
    expect((await request(t.http).get('/api/v1/sso/logout/callback').expect(302)).headers.location).toBe('/login');
  });

  it('a redirect path leaving the origin is not sent to the OP either', async () => {
    const pair = await signIn(new CookieJar(), bySid.provider);
    const res = await request(t.http).post('/api/v1/sso/logout').set('Authorization', `Bearer ${pair.accessToken}`).send({ redirect: 'https://evil.example/' }).expect(200);
    expect(new URL(res.body.logoutUrl).searchParams.get('state')).toBe('/');
  });

  it('signing out at the OP ends, through its back-channel logout, every session that OP session opened (sid), refresh tokens included', async () => {
    const jar = new CookieJar();
    const first = await signIn(jar, bySid.provider);
    const second = await signIn(jar, bySid.provider);
    const elsewhere = await signIn(new CookieJar(), bySid.provider);
    await op.backchannelResults();

    await browserlessEndSession(op.endSessionEndpoint, jar);
    const sent = await op.backchannelResults();
    expect(sent).toEqual([expect.objectContaining({ clientId: bySid.clientId, ok: true, sid: expect.any(String) })]);
    await expectEnded(first);
    await expectEnded(second);
    // Another OP session of the same person (another browser) is not named by this sid.
    await me(elsewhere.accessToken).expect(200);
    const [audit] = await auditOf(bySid.provider, 'sso.logout.backchannel');
    expect(audit.details).toEqual({ by: 'sid', sessionsEnded: 2 });
  });

  it('a logout token naming only the subject ends every session of that subject at that provider, and none at another provider', async () => {
    const viaSub = await signIn(new CookieJar(), bySub.provider);
    const viaSub2 = await signIn(new CookieJar(), bySub.provider);
    const otherProvider = await signIn(new CookieJar(), bySid.provider);
    const jar = new CookieJar();
    await signIn(jar, bySub.provider);
    await op.backchannelResults();
    await browserlessEndSession(op.endSessionEndpoint, jar);
    expect(await op.backchannelResults()).toEqual([expect.objectContaining({ clientId: bySub.clientId, ok: true })]);
    await expectEnded(viaSub);
    await expectEnded(viaSub2);
    await me(otherProvider.accessToken).expect(200);
  });

  describe('refused logout tokens (400 invalid_logout_token, audited, nothing ends)', () => {
    let pair: { accessToken: string; refreshToken: string };
    let sid: string;

    beforeAll(async () => {
      pair = await signIn(new CookieJar(), bySid.provider);
      const [link] = await ownerQuery<{ idp_session_id: string }>(`SELECT idp_session_id FROM sso_session_links WHERE session_id = $1`, [sessionOf(pair.accessToken)]);
      sid = link.idp_session_id;
    });

    const claims = (overrides: Record<string, unknown> = {}) => ({
      iss: op.issuer,
      aud: bySid.clientId,
      iat: Math.floor(Date.now() / 1000),
      exp: Math.floor(Date.now() / 1000) + 120,
      jti: randomUUID(),
      sid,
      sub: 'admin-a-idp',
      events: { [EVENT]: {} },
      ...overrides,
    });

    async function expectRefused(logoutToken: string, reason: string) {
      const res = await backchannel(bySid.provider, { logout_token: logoutToken }).expect(400);
      expect(res.body.code).toBe('invalid_logout_token');
      expect(JSON.stringify(res.body)).not.toContain(reason);
      const [audit] = await auditOf(bySid.provider, 'sso.logout.rejected');
      expect(audit.details).toEqual({ reason });
      await me(pair.accessToken).expect(200);
    }

    it('unsigned (alg none)', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const body = Buffer.from(JSON.stringify(claims())).toString('base64url');
      await expectRefused(`${header}.${body}.`, 'logout_token_alg_not_allowed');
    });

    it('signed by a key that is not the provider’s, under the provider’s key id', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const forged = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'test-op-rs256' }).sign(privateKey);
      await expectRefused(forged, 'logout_token_signature_invalid');
    });

    it('for another audience', async () => {
      await expectRefused(await op.signJwt(claims({ aud: 'some-other-client' })), 'logout_token_aud_invalid');
    });

    it('from another issuer', async () => {
      await expectRefused(await op.signJwt(claims({ iss: 'https://attacker-idp.example' })), 'logout_token_iss_invalid');
    });

    it('carrying a nonce (an ID token, not a logout token)', async () => {
      await expectRefused(await op.signJwt(claims({ nonce: 'n-0S6_WzA2Mj' })), 'logout_token_nonce_present');
    });

    it('without the back-channel logout event, or with another event only', async () => {
      await expectRefused(await op.signJwt(claims({ events: undefined })), 'logout_token_events_invalid');
      await expectRefused(await op.signJwt(claims({ events: { 'http://schemas.openid.net/event/other': {} } })), 'logout_token_event_missing');
    });

    it('naming neither sid nor sub', async () => {
      await expectRefused(await op.signJwt(claims({ sid: undefined, sub: undefined })), 'logout_token_sub_and_sid_missing');
    });

    it('issued too long ago', async () => {
      const old = Math.floor(Date.now() / 1000) - 3600;
      await expectRefused(await op.signJwt(claims({ iat: old, exp: old + 7200 })), 'logout_token_expired');
    });

    it('without a jti', async () => {
      await expectRefused(await op.signJwt(claims({ jti: undefined })), 'logout_token_jti_invalid');
    });

    it('replayed: the same jti is accepted once', async () => {
      const other = await signIn(new CookieJar(), bySid.provider);
      const [link] = await ownerQuery<{ idp_session_id: string }>(`SELECT idp_session_id FROM sso_session_links WHERE session_id = $1`, [sessionOf(other.accessToken)]);
      const token = await op.signJwt(claims({ sid: link.idp_session_id }));
      expect((await backchannel(bySid.provider, { logout_token: token }).expect(200)).body).toEqual({ success: true });
      await expectEnded(other);
      await expectRefused(token, 'logout_token_replayed');
    });

    it('replayed concurrently: of five identical posts exactly one is accepted', async () => {
      const other = await signIn(new CookieJar(), bySid.provider);
      const [link] = await ownerQuery<{ idp_session_id: string }>(`SELECT idp_session_id FROM sso_session_links WHERE session_id = $1`, [sessionOf(other.accessToken)]);
      const token = await op.signJwt(claims({ sid: link.idp_session_id }));
      const answers = await Promise.all(Array.from({ length: 5 }, () => backchannel(bySid.provider, { logout_token: token })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400]);
      await expectEnded(other);
    });

    it('a token valid for one provider is refused at another provider’s endpoint (its audience is the other client)', async () => {
      const res = await backchannel(bySub.provider, { logout_token: await op.signJwt(claims()) }).expect(400);
      expect(res.body.code).toBe('invalid_logout_token');
      const [audit] = await auditOf(bySub.provider, 'sso.logout.rejected');
      expect(audit.details).toEqual({ reason: 'logout_token_aud_invalid' });
    });

    it('answers 404 for an unknown provider or a SAML one, and 400 when the form has no logout_token', async () => {
      const token = await op.signJwt(claims());
      expect((await backchannel(randomUUID(), { logout_token: token }).expect(404)).body.code).toBe('not_found');
      const saml = await insertProvider(t, { orgId: ids.orgB, type: 'saml' });
      expect((await backchannel(saml, { logout_token: token }).expect(404)).body.code).toBe('not_found');
      expect((await backchannel(bySid.provider, {}).expect(400)).body.code).toBe('validation_failed');
      await me(pair.accessToken).expect(200);
    });
  });

  it('a session that no identity provider opened is ended too, and its logoutUrl is the return path', async () => {
    const token = await t.token(ids.readerA);
    const res = await request(t.http).post('/api/v1/sso/logout').set('Authorization', `Bearer ${token}`).send({}).expect(200);
    expect(res.body).toEqual({ success: true, logoutUrl: '/login' });
    await me(token).expect(401);
  });
});
