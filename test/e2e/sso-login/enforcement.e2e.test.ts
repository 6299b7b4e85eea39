import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { AfterResponseService } from '../../../src/modules/auth/after-response.service';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { exchangeCodeOf, insertProvider, opEndpoints, registerWithOp, roundTrip, verifyDomain, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/** Spec 1.4: enforceSSO on an active provider closes the password paths of the users it governs. */
describe('SSO enforcement of password sign-in, forgot and reset', () => {
  let t: TestApp;
  let op: OidcOpHandle;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  const passwordLogin = (email: string, password = PASSWORD) => request(t.http).post('/api/v1/auth/login').set('X-Forwarded-For', `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`).send({ email, password });
  const strip = (body: Record<string, unknown>) => ({ ...body, requestId: undefined });
  // forgot-password issues the token after its answer has left: count once that work is done
  const resetTokens = async (userId: string) => {
    await t.app.get(AfterResponseService).drain();
    return Number((await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM password_reset_tokens WHERE user_id = $1`, [userId]))[0].n);
  };

  describe('an organization provider that is active and enforcing', () => {
    let f: ReturnType<typeof tenantFixture>;
    let ids: Record<string, string>;
    beforeAll(async () => {
      f = tenantFixture();
      ids = await t.seed(f);
      // Governed users sign in with a password too: linking their accounts by email needs the organization's domain proof.
      await verifyDomain(ids.orgA, f.emails.adminA.split('@')[1]);
      await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), enforceSso: true });
    }, BOOT_TIMEOUT_MS);

    it('refuses the correct password of a governed user with the same body as a wrong password', async () => {
      const refused = await passwordLogin(f.emails.readerA).expect(401);
      const wrong = await passwordLogin(f.emails.readerA, 'not-the-password').expect(401);
      expect(strip(refused.body)).toEqual(strip(wrong.body));
      expect(refused.body).toMatchObject({ code: 'invalid_credentials', error: 'Invalid email or password' });
      const [audit] = await ownerQuery(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at DESC LIMIT 1`, [ids.readerA]);
      expect(audit).toEqual({ action: 'auth.login.refused_sso_enforced' });
    });

    it('refuses it for an MFA-enrolled user before any MFA challenge is issued', async () => {
      const res = await passwordLogin(f.emails.adminA).expect(401);
      expect(res.body.code).toBe('invalid_credentials');
      expect(res.body.mfaToken).toBeUndefined();
    });

    it('answers forgot-password with the generic success and sends no reset link', async () => {
      const governed = await request(t.http).post('/api/v1/auth/forgot-password').send({ email: f.emails.readerA }).expect(200);
      const other = await request(t.http).post('/api/v1/auth/forgot-password').send({ email: f.emails.adminB }).expect(200);
      expect(governed.body).toEqual(other.body);
      expect(await resetTokens(ids.readerA)).toBe(0);
      expect(await resetTokens(ids.adminB)).toBe(1);
    });

    it('refuses a reset link issued before enforcement and keeps the old password', async () => {
      const hashOf = async () => (await ownerQuery<{ password_hash: string }>(`SELECT password_hash FROM users WHERE id = $1`, [ids.siteA1User]))[0].password_hash;
      const before = await hashOf();
      const token = randomBytes(32).toString('base64url');
      await ownerQuery(`INSERT INTO password_reset_tokens (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '1 hour')`, [ids.siteA1User, tokenHash(token)]);
      const res = await request(t.http).post('/api/v1/auth/reset-password').send({ token, password: 'a-brand-new-password' }).expect(400);
      expect(res.body.code).toBe('invalid_reset_token');
      expect(await hashOf()).toBe(before);
    });

    it('leaves users of other organizations and the partner technicians on passwords', async () => {
      await passwordLogin(f.emails.adminB).expect(200);
      await passwordLogin(f.emails.tech).expect(200);
    });

    it('still signs the governed user in through SSO', async () => {
      await op.setAccount('enforced-reader', { email: f.emails.readerA, email_verified: true });
      await op.loginAs('enforced-reader');
      const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
      expect(exchangeCodeOf(cb.location)).not.toBeNull();
    });
  });

  it('closes the password paths of technicians under an enforcing partner provider, not of organization users', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    await insertProvider(t, { partnerId: ids.partner, ...opEndpoints(op), enforceSso: true });
    expect((await passwordLogin(f.emails.tech).expect(401)).body.code).toBe('invalid_credentials');
    expect((await passwordLogin(f.emails.techA).expect(401)).body.code).toBe('invalid_credentials');
    await request(t.http).post('/api/v1/auth/forgot-password').send({ email: f.emails.tech }).expect(200);
    expect(await resetTokens(ids.tech)).toBe(0);
    await passwordLogin(f.emails.readerA).expect(200);
  });

  it.each(['testing', 'inactive'] as const)('does not enforce through a provider in %s, whatever its enforceSSO', async (status) => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), enforceSso: true, status });
    await passwordLogin(f.emails.readerA).expect(200);
    await request(t.http).post('/api/v1/auth/forgot-password').send({ email: f.emails.readerA }).expect(200);
    expect(await resetTokens(ids.readerA)).toBe(1);
  });

  it('refuses to let a provider that cannot complete a sign-in enforce SSO or become active', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const provider = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), clientId: null, status: 'inactive' });
    const admin = await t.token(ids.adminA, { mfa: true });
    const enforce = await request(t.http).patch(`/api/v1/sso/providers/${provider}`).set('Authorization', `Bearer ${admin}`).send({ enforceSSO: true }).expect(400);
    expect(enforce.body).toMatchObject({ code: 'provider_incomplete', missing: expect.arrayContaining(['clientId']) });
    const activate = await request(t.http).post(`/api/v1/sso/providers/${provider}/status`).set('Authorization', `Bearer ${admin}`).send({ status: 'active' }).expect(400);
    expect(activate.body.code).toBe('provider_incomplete');
    await passwordLogin(f.emails.readerA).expect(200);
  });
});
