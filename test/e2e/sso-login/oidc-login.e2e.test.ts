import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import {
  CALLBACK_URL,
  exchange,
  exchangeCodeOf,
  insertProvider,
  OP_CLIENT_ID,
  opEndpoints,
  registerWithOp,
  roundTrip,
  sessionCount,
  startLogin,
  verifyDomain,
  BOOT_TIMEOUT_MS,
  startOp,
} from './sso-login.kit';

describe('OIDC sign-in against a real OpenID Provider', () => {
  let t: TestApp;
  let op: OidcOpHandle;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let domain: string;
  let orgProvider: string;
  let partnerProvider: string;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
    f = tenantFixture();
    ids = await t.seed(f);
    domain = f.emails.adminA.split('@')[1];
    // Both organizations own their users' domain: provisioning, and matching a password account by email, need that proof.
    await verifyDomain(ids.orgA, domain);
    await verifyDomain(ids.orgB, domain);
    orgProvider = await insertProvider(t, { orgId: ids.orgA, name: 'Corp IdP', ...opEndpoints(op), defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA });
    partnerProvider = await insertProvider(t, { partnerId: ids.partner, name: 'MSP IdP', ...opEndpoints(op) });
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  const loginAs = async (sub: string, claims: Record<string, unknown>, amr: string[] | null = ['pwd']) => {
    await op.setAccount(sub, claims, { amr });
    await op.loginAs(sub);
  };
  const me = (accessToken: string) => request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`);

  it('starts the login with a 302 to the IdP carrying PKCE S256, state and nonce, and sets the bound state cookie', async () => {
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}?redirect=/devices`);
    expect(started.status).toBe(302);
    const url = new URL(started.location);
    expect(`${url.origin}${url.pathname}`).toBe(op.authorizationEndpoint);
    const q = Object.fromEntries(url.searchParams);
    expect(q).toMatchObject({ response_type: 'code', client_id: OP_CLIENT_ID, redirect_uri: CALLBACK_URL, scope: 'openid profile email', code_challenge_method: 'S256' });
    expect(q.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);

    expect(started.cookie).toMatch(new RegExp(`^svc_sso_state=${q.state}\\.[A-Za-z0-9_-]{43}$`));
    const attributes = started.setCookie.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['max-age=600', 'path=/api/v1/sso/callback', 'httponly', 'samesite=lax']));
    expect(attributes).not.toContain('secure');

    const [row] = await ownerQuery<{ nonce: string; redirect_url: string; generation: number; purpose: string; ttl: number; code_verifier: string }>(
      `SELECT nonce, redirect_url, generation, purpose, code_verifier, extract(epoch FROM expires_at - created_at)::int AS ttl FROM sso_sessions WHERE state = $1`,
      [q.state],
    );
    expect(row).toMatchObject({ nonce: q.nonce, redirect_url: '/devices', generation: 1, purpose: 'login', ttl: 600 });
    expect(row.code_verifier).toHaveLength(64);
  });

  it('provisions a new user on first sign-in, with the default role, no password, and an encrypted identity link', async () => {
    const email = `new-hire@${domain}`;
    await loginAs('new-hire', { email, email_verified: true, name: 'New Hire' });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}?redirect=/devices?view=mine`);
    expect(cb.status).toBe(302);
    expect(cb.location).toMatch(/^\/devices\?view=mine#ssoCode=[A-Za-z0-9_-]{43}$/);
    expect(cb.setCookie.join(';')).toMatch(/svc_sso_state=;.*Expires=Thu, 01 Jan 1970/);

    const [user] = await ownerQuery<{ id: string; name: string; password_hash: string | null }>(`SELECT id, name, password_hash FROM users WHERE email = $1`, [email]);
    expect(user).toMatchObject({ name: 'New Hire', password_hash: null });
    const [membership] = await ownerQuery(`SELECT role_id FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, user.id]);
    expect(membership).toEqual({ role_id: ids.readerRoleA });
    const [identity] = await ownerQuery<{ external_id: string; access_token: string; email: string; profile: Record<string, unknown> }>(
      `SELECT external_id, access_token, email, profile FROM user_sso_identities WHERE user_id = $1 AND provider_id = $2`,
      [user.id, orgProvider],
    );
    expect(identity).toMatchObject({ external_id: 'new-hire', email, profile: expect.objectContaining({ sub: 'new-hire', email }) });
    expect(identity.access_token).toMatch(/^enc:v1:/);

    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    expect(pair.body).toEqual({ accessToken: expect.any(String), refreshToken: expect.stringMatching(/^rt_/), expiresInSeconds: expect.any(Number) });
    expect(pair.body.expiresInSeconds).toBeGreaterThan(880);
    const who = await me(pair.body.accessToken).expect(200);
    expect(who.body.user).toMatchObject({ id: user.id, email });
    expect(who.body.session).toMatchObject({ scope: 'organization', orgId: ids.orgA, mfa: false });
    const [session] = await ownerQuery(`SELECT auth_method, sso_provider_id FROM sessions WHERE user_id = $1`, [user.id]);
    expect(session).toEqual({ auth_method: 'sso', sso_provider_id: orgProvider });
    const actions = (await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [user.id])).map((r) => r.action);
    expect(actions).toEqual(['sso.user.provisioned', 'sso.login']);
  });

  it('signs in an existing user matched by email, then by the linked identity even after the IdP email changes', async () => {
    await loginAs('admin-a-idp', { email: f.emails.adminA.toUpperCase(), email_verified: true, name: 'Admin A' });
    const first = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(first.location).toMatch(/^\/#ssoCode=/);
    const pair = await exchange(t, exchangeCodeOf(first.location)!).expect(200);
    expect((await me(pair.body.accessToken).expect(200)).body.user.id).toBe(ids.adminA);
    const [{ n }] = await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM users WHERE lower(email) = lower($1)`, [f.emails.adminA]);
    expect(n).toBe('1');

    // Identity first: the link made above wins over the email the IdP now reports.
    await loginAs('admin-a-idp', { email: `renamed@${domain}`, email_verified: true, name: 'Admin A' });
    const second = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    const again = await exchange(t, exchangeCodeOf(second.location)!).expect(200);
    expect((await me(again.body.accessToken).expect(200)).body.user.id).toBe(ids.adminA);
    const [identity] = await ownerQuery(`SELECT email FROM user_sso_identities WHERE provider_id = $1 AND external_id = 'admin-a-idp'`, [orgProvider]);
    expect(identity).toEqual({ email: `renamed@${domain}` });
  });

  it('signs a partner technician in to a partner-scope session through the partner login route', async () => {
    await loginAs('tech-idp', { email: f.emails.tech, email_verified: true, name: 'Tech' });
    const cb = await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    const who = await me(pair.body.accessToken).expect(200);
    expect(who.body.user.id).toBe(ids.tech);
    expect(who.body.session).toMatchObject({ scope: 'partner', partnerId: ids.partner });
    await request(t.http).get('/api/v1/organizations').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
    const [identity] = await ownerQuery(`SELECT partner_id, org_id FROM user_sso_identities WHERE provider_id = $1`, [partnerProvider]);
    expect(identity).toEqual({ partner_id: ids.partner, org_id: null });
  });

  describe('trusting the IdP MFA (spec 1.7)', () => {
    let trusting: string;
    beforeAll(async () => {
      trusting = await insertProvider(t, { orgId: ids.orgB, ...opEndpoints(op), trustsIdpMfa: true });
    }, BOOT_TIMEOUT_MS);

    const mfaOf = async (loginPath: string) => {
      const cb = await roundTrip(t, loginPath);
      const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
      return (await me(pair.body.accessToken).expect(200)).body.session.mfa as boolean;
    };

    it('satisfies MFA when the provider trusts the IdP and amr contains mfa', async () => {
      await loginAs('admin-b-idp', { email: f.emails.adminB, email_verified: true }, ['pwd', 'mfa']);
      expect(await mfaOf(`/api/v1/sso/login/${ids.orgB}`)).toBe(true);
      const [session] = await ownerQuery(`SELECT mfa FROM sessions WHERE user_id = $1 AND sso_provider_id = $2`, [ids.adminB, trusting]);
      expect(session).toEqual({ mfa: true });
    });

    it('does not satisfy MFA when amr lacks mfa or is absent, even with trust', async () => {
      await loginAs('admin-b-idp', { email: f.emails.adminB, email_verified: true }, ['pwd', 'otp']);
      expect(await mfaOf(`/api/v1/sso/login/${ids.orgB}`)).toBe(false);
      await loginAs('admin-b-idp', { email: f.emails.adminB, email_verified: true }, null);
      expect(await mfaOf(`/api/v1/sso/login/${ids.orgB}`)).toBe(false);
    });

    it('does not satisfy MFA through the IdP when the provider does not trust it (the default)', async () => {
      await loginAs('reader-a-idp', { email: f.emails.readerA, email_verified: true }, ['pwd', 'mfa']);
      expect(await mfaOf(`/api/v1/sso/login/${ids.orgA}`)).toBe(false);
    });
  });

  describe('email verification safeguards (spec 1.2.1–2)', () => {
    it('rejects an IdP that reports the email unverified, even for an already linked identity', async () => {
      await loginAs('admin-a-idp', { email: f.emails.adminA, email_verified: false });
      const before = await sessionCount(ids.adminA);
      const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
      expect(cb.location).toBe('/login?error=sso_email_unverified');
      expect(await sessionCount(ids.adminA)).toBe(before);
    });

    it('matches a first-time identity without email_verified only on a DNS-verified domain of the organization', async () => {
      await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
      try {
        await loginAs('site-a1-idp', { email: f.emails.siteA1 }, ['pwd']);
        const refused = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
        expect(refused.location).toBe('/login?error=sso_domain_unverified');

        await verifyDomain(ids.orgA, domain);
        await op.loginAs('site-a1-idp');
        const accepted = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
        expect(accepted.location).toMatch(/^\/#ssoCode=/);
        await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);

        // Already linked now: exempt from the domain rule.
        await op.loginAs('site-a1-idp');
        const linked = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
        expect(linked.location).toMatch(/^\/#ssoCode=/);
      } finally {
        await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
        await verifyDomain(ids.orgA, domain);
      }
    });

    it('does not provision a user whose email the IdP left unverified on an unverified domain', async () => {
      await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
      try {
        const email = `unverified-hire@${domain}`;
        await loginAs('unverified-hire', { email });
        const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
        expect(cb.location).toBe('/login?error=sso_domain_unverified');
        expect(await ownerQuery(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);
      } finally {
        await verifyDomain(ids.orgA, domain);
      }
    });

    it('does not provision a user on a domain the organization has not verified, even when the IdP calls the email verified', async () => {
      await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
      try {
        const email = `verified-elsewhere-hire@${domain}`;
        await loginAs('verified-elsewhere-hire', { email, email_verified: true });
        const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
        expect(cb.location).toBe('/login?error=sso_domain_unverified');
        expect(await ownerQuery(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);
      } finally {
        await verifyDomain(ids.orgA, domain);
      }
    });
  });

  describe('which provider a login entry route uses', () => {
    let org: Record<string, string>;
    beforeAll(async () => {
      const g = tenantFixture();
      org = await t.seed(g);
    }, BOOT_TIMEOUT_MS);

    it('answers 404 when the organization has no active provider (testing and inactive ones do not count)', async () => {
      await insertProvider(t, { orgId: org.orgA, ...opEndpoints(op), status: 'testing' });
      await insertProvider(t, { orgId: org.orgA, ...opEndpoints(op), status: 'inactive' });
      const res = await startLogin(t, `/api/v1/sso/login/${org.orgA}`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', error: 'No active SSO provider for this organization' });
      expect(res.cookie).toBe('');
    });

    it('uses the oldest active provider by creation time', async () => {
      const older = await insertProvider(t, { orgId: org.orgB, ...opEndpoints(op), createdAt: '2024-01-01T00:00:00Z', name: 'older' });
      await insertProvider(t, { orgId: org.orgB, ...opEndpoints(op), createdAt: '2025-01-01T00:00:00Z', name: 'newer', clientId: 'someone-else' });
      const started = await startLogin(t, `/api/v1/sso/login/${org.orgB}`);
      expect(new URL(started.location).searchParams.get('client_id')).toBe(OP_CLIENT_ID);
      const state = new URL(started.location).searchParams.get('state');
      expect(await ownerQuery(`SELECT provider_id FROM sso_sessions WHERE state = $1`, [state])).toEqual([{ provider_id: older }]);
    });

    it('refuses to start with a provider lacking client id, secret or issuer, naming what is missing', async () => {
      const g = await t.seed(tenantFixture());
      await insertProvider(t, { orgId: g.orgA, ...opEndpoints(op), clientId: null, clientSecret: null });
      const res = await startLogin(t, `/api/v1/sso/login/${g.orgA}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_provider_configuration', missing: ['clientId', 'clientSecret'] });
      expect(await ownerQuery(`SELECT id FROM sso_sessions WHERE org_id = $1`, [g.orgA])).toEqual([]);
    });

    it('re-validates stored endpoints at login start and refuses one that is not https', async () => {
      const g = await t.seed(tenantFixture());
      await insertProvider(t, { orgId: g.orgA, ...opEndpoints(op), tokenUrl: 'http://idp.example/token' });
      const res = await startLogin(t, `/api/v1/sso/login/${g.orgA}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_provider_configuration', reason: 'token_endpoint_insecure_scheme' });
    });

    it('answers 400 invalid_id for a login route whose id is not a UUID', async () => {
      const res = await startLogin(t, '/api/v1/sso/login/not-a-uuid');
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_id');
    });
  });
});
