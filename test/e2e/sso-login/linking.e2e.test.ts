import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { browserlessAuthorize, OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, bumpGeneration, callback, exchange, exchangeCodeOf, insertProvider, mintedThrough, opEndpoints, registerWithOp, roundTrip, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/** Spec 1.8 (docs/sso-login.md): a signed-in user links an IdP identity to their own account. */
describe('self-service identity linking', () => {
  let t: TestApp;
  let op: OidcOpHandle;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  async function tenant() {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const provider = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), name: 'Corp IdP', autoProvision: false });
    return { f, ids, provider };
  }

  const linkStart = (token: string, providerId: string) => request(t.http).post(`/api/v1/sso/link/start/${providerId}`).set('Authorization', `Bearer ${token}`);

  /** Starts linking as `token`'s user and completes the IdP leg as `sub`; stops before the callback. */
  async function linkAtCallback(token: string, providerId: string, sub: string, claims: Record<string, unknown>) {
    const started = await linkStart(token, providerId).expect(200);
    const cookie = ([] as string[]).concat(started.headers['set-cookie']).find((c) => c.startsWith('svc_sso_state='))!.split(';')[0];
    await op.setAccount(sub, claims);
    await op.loginAs(sub);
    return { cookie, idpRedirect: await browserlessAuthorize(started.body.authUrl) };
  }

  async function link(token: string, providerId: string, sub: string, claims: Record<string, unknown>) {
    const at = await linkAtCallback(token, providerId, sub, claims);
    return (await callback(t, at.idpRedirect, at.cookie)).location;
  }

  it('lists the active OIDC providers of the session organization, with what is linked', async () => {
    const { f, ids, provider } = await tenant();
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), status: 'inactive' });
    await insertProvider(t, { orgId: ids.orgA, type: 'saml' });
    await insertProvider(t, { orgId: ids.orgB, ...opEndpoints(op) });
    const token = await t.token(ids.readerA);
    const before = await request(t.http).get('/api/v1/sso/link/options').set('Authorization', `Bearer ${token}`).expect(200);
    expect(before.body).toEqual({ success: true, providers: [{ id: provider, name: 'Corp IdP', linked: false, linkedEmail: null, lastLoginAt: null }] });

    expect(await link(await t.token(ids.readerA, { mfa: true }), provider, 'reader-listed', { email: f.emails.readerA, email_verified: true })).toBe('/settings/profile?ssoLinked=1');
    const after = await request(t.http).get('/api/v1/sso/link/options').set('Authorization', `Bearer ${token}`).expect(200);
    expect(after.body.providers[0]).toMatchObject({ id: provider, linked: true, linkedEmail: f.emails.readerA, lastLoginAt: expect.any(String) });
  });

  it('starts only from an MFA-satisfied session, for a provider of its own tenant', async () => {
    const { ids, provider } = await tenant();
    const other = await insertProvider(t, { orgId: ids.orgB, ...opEndpoints(op) });
    const inactive = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), status: 'inactive' });
    const plain = await t.token(ids.readerA);
    expect((await linkStart(plain, provider).expect(403)).body.code).toBe('mfa_required');
    await request(t.http).post(`/api/v1/sso/link/start/${provider}`).expect(401);
    const mfa = await t.token(ids.readerA, { mfa: true });
    expect((await linkStart(mfa, other).expect(404)).body.code).toBe('not_found');
    expect((await linkStart(mfa, inactive).expect(404)).body.code).toBe('not_found');
    expect((await request(t.http).post('/api/v1/sso/link/start/nope').set('Authorization', `Bearer ${mfa}`).expect(400)).body.code).toBe('invalid_id');
    const ok = await linkStart(mfa, provider).expect(200);
    expect(ok.body).toEqual({ authUrl: expect.stringMatching(new RegExp(`^${op.authorizationEndpoint}\\?`)) });
    expect(String(ok.headers['set-cookie'])).toMatch(/svc_sso_state=[^;]+; Max-Age=600; Path=\/api\/v1\/sso\/callback;.*HttpOnly; SameSite=Lax/);
  });

  it('links the identity without signing anyone in, and later sign-ins match it first', async () => {
    const { f, ids, provider } = await tenant();
    const token = await t.token(ids.readerA, { mfa: true });
    expect(await link(token, provider, 'reader-a-linked', { email: f.emails.readerA.toUpperCase(), email_verified: true })).toBe('/settings/profile?ssoLinked=1');
    expect(await ownerQuery(`SELECT user_id, email FROM user_sso_identities WHERE provider_id = $1 AND external_id = 'reader-a-linked'`, [provider])).toEqual([
      { user_id: ids.readerA, email: f.emails.readerA.toUpperCase() },
    ]);
    expect((await mintedThrough(provider)).sessions).toBe(0);
    expect(await auditOf(ids.readerA, 'sso.identity.linked')).toHaveLength(1);

    // The IdP account's email changes; the link still decides who signs in.
    await op.setAccount('reader-a-linked', { email: 'someone-else@elsewhere.example', email_verified: true });
    await op.loginAs('reader-a-linked');
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
    expect(me.body.user.id).toBe(ids.readerA);
  });

  it('replaces an earlier link when the user links another account of the same IdP', async () => {
    const { f, ids, provider } = await tenant();
    const token = await t.token(ids.readerA, { mfa: true });
    await link(token, provider, 'old-account', { email: f.emails.readerA, email_verified: true });
    expect(await link(token, provider, 'new-account', { email: f.emails.readerA, email_verified: true })).toBe('/settings/profile?ssoLinked=1');
    expect(await ownerQuery(`SELECT external_id FROM user_sso_identities WHERE user_id = $1`, [ids.readerA])).toEqual([{ external_id: 'new-account' }]);
  });

  const refusal = async (provider: string, code: string, reason: string) => {
    const [audit] = await auditOf(provider, 'sso.link.rejected');
    expect(audit.details).toEqual({ code, reason });
  };

  it('email_mismatch: the IdP reports another email than the account has', async () => {
    const { ids, provider } = await tenant();
    const location = await link(await t.token(ids.readerA, { mfa: true }), provider, 'mismatch', { email: 'other@elsewhere.example', email_verified: true });
    expect(location).toBe('/settings/profile?ssoLinkError=email_mismatch');
    expect(await ownerQuery(`SELECT 1 FROM user_sso_identities WHERE provider_id = $1`, [provider])).toEqual([]);
    await refusal(provider, 'email_mismatch', 'idp_email_differs_from_account_email');
  });

  it('email_mismatch: the IdP reports the email unverified', async () => {
    const { f, ids, provider } = await tenant();
    const location = await link(await t.token(ids.readerA, { mfa: true }), provider, 'unverified', { email: f.emails.readerA, email_verified: false });
    expect(location).toBe('/settings/profile?ssoLinkError=email_mismatch');
    await refusal(provider, 'email_mismatch', 'idp_reports_email_unverified');
  });

  it('identity_in_use: the IdP identity is already linked to another account', async () => {
    const { f, ids, provider } = await tenant();
    await link(await t.token(ids.adminA, { mfa: true }), provider, 'shared-sub', { email: f.emails.adminA, email_verified: true });
    const location = await link(await t.token(ids.readerA, { mfa: true }), provider, 'shared-sub', { email: f.emails.readerA, email_verified: true });
    expect(location).toBe('/settings/profile?ssoLinkError=identity_in_use');
    expect(await ownerQuery(`SELECT user_id FROM user_sso_identities WHERE external_id = 'shared-sub' AND provider_id = $1`, [provider])).toEqual([{ user_id: ids.adminA }]);
    await refusal(provider, 'identity_in_use', 'subject_linked_to_another_user');
  });

  it('user_gone: the account was disabled, or deleted, while the round trip was at the IdP', async () => {
    const { f, ids, provider } = await tenant();
    const disabled = await linkAtCallback(await t.token(ids.readerA, { mfa: true }), provider, 'gone-1', { email: f.emails.readerA, email_verified: true });
    await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [ids.readerA]);
    expect((await callback(t, disabled.idpRedirect, disabled.cookie)).location).toBe('/settings/profile?ssoLinkError=user_gone');
    await refusal(provider, 'user_gone', 'account_disabled');

    const deleted = await linkAtCallback(await t.token(ids.siteA1User, { mfa: true }), provider, 'gone-2', { email: f.emails.siteA1, email_verified: true });
    await ownerQuery(`DELETE FROM users WHERE id = $1`, [ids.siteA1User]);
    expect((await callback(t, deleted.idpRedirect, deleted.cookie)).location).toBe('/settings/profile?ssoLinkError=user_gone');
    await refusal(provider, 'user_gone', 'account_deleted');
  });

  it('session_invalid: the session that started the linking was signed out meanwhile', async () => {
    const { f, ids, provider } = await tenant();
    const token = await t.token(ids.readerA, { mfa: true });
    const at = await linkAtCallback(token, provider, 'signed-out', { email: f.emails.readerA, email_verified: true });
    await request(t.http).post('/api/v1/auth/logout').set('Authorization', `Bearer ${token}`).expect(200);
    expect((await callback(t, at.idpRedirect, at.cookie)).location).toBe('/settings/profile?ssoLinkError=session_invalid');
    await refusal(provider, 'session_invalid', 'initiating_session_ended');
    expect(await ownerQuery(`SELECT 1 FROM user_sso_identities WHERE provider_id = $1`, [provider])).toEqual([]);
  });

  it('config_changed: the provider was reconfigured while the round trip was at the IdP', async () => {
    const { f, ids, provider } = await tenant();
    const at = await linkAtCallback(await t.token(ids.readerA, { mfa: true }), provider, 'reconfigured', { email: f.emails.readerA, email_verified: true });
    await bumpGeneration(provider);
    expect((await callback(t, at.idpRedirect, at.cookie)).location).toBe('/settings/profile?ssoLinkError=config_changed');
    await refusal(provider, 'config_changed', 'provider_reconfigured_since_login_start');
  });

  it('lets a partner technician link with the partner provider', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const provider = await insertProvider(t, { partnerId: ids.partner, ...opEndpoints(op) });
    const token = await t.token(ids.tech, { mfa: true });
    const options = await request(t.http).get('/api/v1/sso/link/options').set('Authorization', `Bearer ${token}`).expect(200);
    expect(options.body.providers.map((p: { id: string }) => p.id)).toEqual([provider]);
    expect(await link(token, provider, 'tech-linked', { email: f.emails.tech, email_verified: true })).toBe('/settings/profile?ssoLinked=1');
  });
});
