/**
 * Self-test of the OIDC test identity providers, run outside jest (the OP's child process is
 * plain ESM and the harnesses live outside the unit glob):
 *
 *   npx ts-node --transpile-only test/support/idp/selftest.ts
 *
 * Prints one line per check and exits non-zero if any fails. The SAML IdP is checked by
 * src/modules/sso/saml/xml/saml-test-idp.spec.ts instead.
 */
import { strict as assert } from 'node:assert';
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { CookieJar } from './cookie-jar';
import { browserlessAuthorize, startOidcOp, type OidcOpHandle } from './oidc-op';
import { startRogueOidcIdp, type RogueMode, type RogueOidcIdp } from './rogue-oidc-idp';

const REDIRECT_URI = 'http://127.0.0.1:9/api/v1/sso/callback';
const CLIENT_ID = 'rmm-selftest';
const CLIENT_SECRET = 'selftest-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  code_challenge_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
}

interface TokenResponse {
  access_token?: string;
  id_token?: string;
  error?: string;
}

interface AuthorizationAttempt {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
}

const failures: string[] = [];

async function check(name: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
    console.log(`  ok    ${name}`);
  } catch (err) {
    failures.push(name);
    console.log(`  FAIL  ${name}\n        ${(err as Error).stack?.split('\n').slice(0, 4).join('\n        ')}`);
  }
}

async function discover(issuer: string): Promise<Discovery> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`);
  assert.equal(response.status, 200);
  return (await response.json()) as Discovery;
}

function authorization(discovery: Discovery, clientId: string, params: Record<string, string | null> = {}): AuthorizationAttempt {
  const state = randomBytes(16).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(discovery.authorization_endpoint);
  const all: Record<string, string | null> = {
    client_id: clientId,
    response_type: 'code',
    scope: 'openid profile email groups',
    redirect_uri: REDIRECT_URI,
    state,
    nonce,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...params,
  };
  for (const [key, value] of Object.entries(all)) {
    if (value !== null) {
      url.searchParams.set(key, value);
    }
  }
  return { url: url.toString(), state, nonce, verifier };
}

async function exchange(
  discovery: Discovery,
  code: string,
  verifier: string,
  credentials: { id: string; secret: string },
): Promise<{ status: number; body: TokenResponse }> {
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(credentials.id)}:${encodeURIComponent(credentials.secret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }),
  });
  return { status: response.status, body: (await response.json()) as TokenResponse };
}

async function userinfo(discovery: Discovery, accessToken: string): Promise<Record<string, unknown>> {
  const response = await fetch(discovery.userinfo_endpoint, { headers: { authorization: `Bearer ${accessToken}` } });
  assert.equal(response.status, 200);
  return (await response.json()) as Record<string, unknown>;
}

function codeFrom(callbackUrl: string, expectedState: string): string {
  const url = new URL(callbackUrl);
  assert.equal(`${url.origin}${url.pathname}`, REDIRECT_URI);
  assert.equal(url.searchParams.get('state'), expectedState);
  const code = url.searchParams.get('code');
  assert.ok(code, `no code in ${callbackUrl}`);
  return code;
}

async function opChecks(op: OidcOpHandle): Promise<void> {
  const discovery = await discover(op.issuer);
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
  const client = { id: CLIENT_ID, secret: CLIENT_SECRET };
  await op.addClient({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT_URI] });
  await op.setAccount(
    'ann',
    { email: 'ann@customer-a.example', email_verified: true, name: 'Ann Example', given_name: 'Ann', family_name: 'Example', groups: ['admins'] },
    { amr: ['pwd', 'mfa'] },
  );
  await op.setAccount('bob', { email: 'bob@customer-a.example', email_verified: false, name: 'Bob' }, { amr: null });

  await check('OP discovery advertises S256 PKCE, RS256 ID tokens and the JWKS URL', async () => {
    assert.equal(discovery.issuer, op.issuer);
    assert.deepEqual(discovery.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(discovery.id_token_signing_alg_values_supported, ['RS256']);
    assert.equal(discovery.jwks_uri, op.jwksUrl);
    assert.equal(discovery.authorization_endpoint, op.authorizationEndpoint);
    assert.equal(discovery.token_endpoint, op.tokenEndpoint);
    assert.equal(discovery.userinfo_endpoint, op.userinfoEndpoint);
  });

  await check('OP completes a browserless code + PKCE round trip with a verifiable RS256 ID token and matching userinfo', async () => {
    const attempt = authorization(discovery, CLIENT_ID);
    await op.loginAs('ann');
    const code = codeFrom(await browserlessAuthorize(attempt.url), attempt.state);

    const token = await exchange(discovery, code, attempt.verifier, client);
    assert.equal(token.status, 200, JSON.stringify(token.body));
    assert.ok(token.body.id_token && token.body.access_token);
    assert.equal(decodeProtectedHeader(token.body.id_token).alg, 'RS256');
    const { payload } = await jwtVerify(token.body.id_token, jwks, { issuer: op.issuer, audience: CLIENT_ID, algorithms: ['RS256'] });
    assert.equal(payload.sub, 'ann');
    assert.equal(payload.nonce, attempt.nonce);
    assert.deepEqual(payload.amr, ['pwd', 'mfa']);
    assert.equal(payload.email, 'ann@customer-a.example');

    const profile = await userinfo(discovery, token.body.access_token);
    assert.equal(profile.sub, payload.sub);
    assert.equal(profile.email, 'ann@customer-a.example');
    assert.equal(profile.email_verified, true);
    assert.deepEqual(profile.groups, ['admins']);
    assert.equal(profile.given_name, 'Ann');
  });

  await check('OP leaves amr out for an account set with amr: null, and reports email_verified false as given', async () => {
    const attempt = authorization(discovery, CLIENT_ID);
    await op.loginAs('bob');
    const code = codeFrom(await browserlessAuthorize(attempt.url), attempt.state);
    const token = await exchange(discovery, code, attempt.verifier, client);
    const { payload } = await jwtVerify(token.body.id_token!, jwks, { issuer: op.issuer, audience: CLIENT_ID });
    assert.equal(payload.sub, 'bob');
    assert.equal('amr' in payload, false);
    assert.equal((await userinfo(discovery, token.body.access_token!)).email_verified, false);
  });

  await check('OP refuses an authorization request without PKCE by redirecting back with invalid_request', async () => {
    const attempt = authorization(discovery, CLIENT_ID, { code_challenge: null, code_challenge_method: null });
    const back = new URL(await browserlessAuthorize(attempt.url));
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.equal(back.searchParams.get('code'), null);
  });

  await check('OP refuses a code redeemed with the wrong PKCE verifier', async () => {
    const attempt = authorization(discovery, CLIENT_ID);
    await op.loginAs('ann');
    const code = codeFrom(await browserlessAuthorize(attempt.url), attempt.state);
    const token = await exchange(discovery, code, randomBytes(32).toString('base64url'), client);
    assert.equal(token.status, 400);
    assert.equal(token.body.error, 'invalid_grant');
  });

  await check('OP without loginAs stops at its login form, and browserlessAuthorize says so', async () => {
    const attempt = authorization(discovery, CLIENT_ID);
    await assert.rejects(browserlessAuthorize(attempt.url), /call loginAs\(sub\) first/);
  });

  await check('OP dev login form signs a browser in with the account amr', async () => {
    const attempt = authorization(discovery, CLIENT_ID);
    const jar = new CookieJar();
    const start = await fetch(attempt.url, { redirect: 'manual' });
    jar.storeFrom(attempt.url, start);
    const formUrl = new URL(start.headers.get('location')!, attempt.url);
    const form = await fetch(formUrl, { headers: jar.requestHeaders(formUrl) });
    assert.match(await form.text(), /name="login"/);
    const submit = await fetch(formUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...jar.requestHeaders(formUrl), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'prompt=login&login=ann&password=anything',
    });
    jar.storeFrom(formUrl, submit);
    assert.equal(submit.status, 303);
    const resume = new URL(submit.headers.get('location')!, formUrl).toString();
    const code = codeFrom(await browserlessAuthorize(resume, { jar, redirectUri: REDIRECT_URI }), attempt.state);
    const token = await exchange(discovery, code, attempt.verifier, client);
    const { payload } = await jwtVerify(token.body.id_token!, jwks, { issuer: op.issuer, audience: CLIENT_ID });
    assert.deepEqual(payload.amr, ['pwd', 'mfa']);
  });

  await check('OP rejects loginAs for an unknown account and an invalid client registration', async () => {
    await assert.rejects(op.loginAs('nobody'), /unknown test account/);
    await assert.rejects(op.addClient({ client_id: 'bad', client_secret: 'x', redirect_uris: ['not a url'] }), /redirect_uri/);
  });
}

async function rogueRoundTrip(
  idp: RogueOidcIdp,
  discovery: Discovery,
  credentials = { id: idp.clientId, secret: idp.clientSecret },
): Promise<{ attempt: AuthorizationAttempt; status: number; body: TokenResponse }> {
  const attempt = authorization(discovery, idp.clientId);
  const code = codeFrom(await browserlessAuthorize(attempt.url), attempt.state);
  const token = await exchange(discovery, code, attempt.verifier, credentials);
  return { attempt, ...token };
}

async function rogueChecks(idp: RogueOidcIdp): Promise<void> {
  const discovery = await discover(idp.issuer);
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
  const verify = (idToken: string) => jwtVerify(idToken, jwks, { issuer: idp.issuer, audience: idp.clientId, algorithms: ['RS256'] });

  await check("rogue IdP 'ok': valid RS256 ID token, PKCE verifier recorded and checked, userinfo with the same sub", async () => {
    assert.equal(discovery.issuer, idp.issuer);
    assert.equal(discovery.jwks_uri, idp.jwksUrl);
    assert.equal(discovery.token_endpoint, idp.tokenEndpoint);
    idp.setMode('ok');
    idp.setClaims({ sub: 'eve', email: 'eve@customer-a.example', amr: ['pwd', 'mfa'] });
    const before = idp.tokenRequests.length;
    const { attempt, status, body } = await rogueRoundTrip(idp, discovery);
    assert.equal(status, 200, JSON.stringify(body));
    const { payload } = await verify(body.id_token!);
    assert.equal(payload.sub, 'eve');
    assert.equal(payload.nonce, attempt.nonce);
    assert.deepEqual(payload.amr, ['pwd', 'mfa']);
    assert.ok(payload.exp! > payload.iat!);
    const recorded = idp.tokenRequests[before];
    assert.equal(recorded.codeVerifier, attempt.verifier);
    assert.equal(recorded.pkceValid, true);
    assert.equal(recorded.clientAuth, 'client_secret_basic');
    assert.equal(idp.authorizeRequests.at(-1)!.params.code_challenge_method, 'S256');
    const profile = await userinfo(discovery, body.access_token!);
    assert.equal(profile.sub, 'eve');
    assert.equal('amr' in profile, false);
  });

  await check("rogue IdP 'alg_none': an unsecured ID token that jose refuses", async () => {
    idp.setMode('alg_none');
    const { status, body } = await rogueRoundTrip(idp, discovery);
    assert.equal(status, 200);
    assert.equal(decodeProtectedHeader(body.id_token!).alg, 'none');
    assert.equal(body.id_token!.split('.')[2], '');
    await assert.rejects(verify(body.id_token!));
  });

  const refusedByJose: Array<[RogueMode, RegExp, (header: ReturnType<typeof decodeProtectedHeader>) => void]> = [
    ['wrong_key', /signature verification failed/, (header) => assert.equal(header.kid, 'rogue-rs256')],
    ['hs256_client_secret', /alg|key/i, (header) => assert.equal(header.alg, 'HS256')],
    ['wrong_iss', /"iss" claim/, () => undefined],
    ['wrong_aud', /"aud" claim/, () => undefined],
    ['expired', /"exp" claim/, () => undefined],
  ];
  for (const [mode, reason, inspectHeader] of refusedByJose) {
    await check(`rogue IdP '${mode}': an ID token that jose refuses`, async () => {
      idp.setMode(mode);
      const { status, body } = await rogueRoundTrip(idp, discovery);
      assert.equal(status, 200);
      inspectHeader(decodeProtectedHeader(body.id_token!));
      await assert.rejects(verify(body.id_token!), reason);
    });
  }

  await check("rogue IdP 'hs256_client_secret': the token really is an HMAC with the client secret", async () => {
    idp.setMode('hs256_client_secret');
    const { body } = await rogueRoundTrip(idp, discovery);
    await jwtVerify(body.id_token!, new TextEncoder().encode(idp.clientSecret), { algorithms: ['HS256'] });
  });

  await check("rogue IdP 'nonce_mismatch': a validly signed ID token carrying another nonce", async () => {
    idp.setMode('nonce_mismatch');
    const { attempt, body } = await rogueRoundTrip(idp, discovery);
    const { payload } = await verify(body.id_token!);
    assert.notEqual(payload.nonce, attempt.nonce);
  });

  await check("rogue IdP 'no_id_token': an access token and no ID token", async () => {
    idp.setMode('no_id_token');
    const { status, body } = await rogueRoundTrip(idp, discovery);
    assert.equal(status, 200);
    assert.ok(body.access_token);
    assert.equal(body.id_token, undefined);
  });

  await check("rogue IdP 'userinfo_sub_mismatch': userinfo names another subject than the ID token", async () => {
    idp.setMode('userinfo_sub_mismatch');
    const { body } = await rogueRoundTrip(idp, discovery);
    const { payload } = await verify(body.id_token!);
    assert.notEqual((await userinfo(discovery, body.access_token!)).sub, payload.sub);
  });

  await check("rogue IdP 'token_500': the token endpoint answers 500", async () => {
    idp.setMode('token_500');
    const { status, body } = await rogueRoundTrip(idp, discovery);
    assert.equal(status, 500);
    assert.equal(body.error, 'server_error');
  });

  await check("rogue IdP 'token_down': the token endpoint drops the connection, after recording the request", async () => {
    idp.setMode('token_down');
    const before = idp.tokenRequests.length;
    await assert.rejects(rogueRoundTrip(idp, discovery), /fetch failed/);
    assert.equal(idp.tokenRequests.length, before + 1);
  });

  await check("rogue IdP 'slow_token': the token endpoint answers only after the delay", async () => {
    idp.setMode('slow_token', { delayMs: 400 });
    const started = Date.now();
    const { status } = await rogueRoundTrip(idp, discovery);
    assert.equal(status, 200);
    assert.ok(Date.now() - started >= 400, `answered after ${Date.now() - started} ms`);
  });

  await check('rogue IdP refuses a wrong client secret, a wrong PKCE verifier and a reused code', async () => {
    idp.setMode('ok');
    const wrongSecret = await rogueRoundTrip(idp, discovery, { id: idp.clientId, secret: 'guess' });
    assert.equal(wrongSecret.status, 401);
    assert.equal(wrongSecret.body.error, 'invalid_client');

    const attempt = authorization(discovery, idp.clientId);
    const code = codeFrom(await browserlessAuthorize(attempt.url), attempt.state);
    const credentials = { id: idp.clientId, secret: idp.clientSecret };
    const wrongVerifier = await exchange(discovery, code, 'x'.repeat(43), credentials);
    assert.equal(wrongVerifier.status, 400);
    assert.equal(wrongVerifier.body.error, 'invalid_grant');
    assert.equal(idp.tokenRequests.at(-1)!.pkceValid, false);
    const reused = await exchange(discovery, code, attempt.verifier, credentials);
    assert.equal(reused.body.error, 'invalid_grant');
  });
}

async function main(): Promise<void> {
  console.log('oidc-op (oidc-provider in a child process)');
  const op = await startOidcOp();
  try {
    await opChecks(op);
  } finally {
    await op.stop();
  }

  console.log('rogue-oidc-idp');
  const idp = await startRogueOidcIdp();
  try {
    await rogueChecks(idp);
  } finally {
    await idp.stop();
  }

  if (failures.length > 0) {
    console.log(`\n${failures.length} check(s) failed`);
    process.exit(1);
  }
  console.log('\nall checks passed');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
