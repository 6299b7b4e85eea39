import request from 'supertest';
import { MfaService } from '../../src/modules/auth/mfa.service';
import { PASSWORD, TOTP_SECRET, tenantFixture } from '../factories/tenant.factory';
import { startTestApp, TestApp } from '../support/test-app';

describe('password sign-in, MFA, refresh rotation and sessions', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let f: ReturnType<typeof tenantFixture>;

  beforeAll(async () => {
    t = await startTestApp();
    f = tenantFixture();
    ids = await t.seed(f);
  });
  afterAll(() => t.close());

  it('signs in a user without MFA and returns a token pair', async () => {
    const res = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.readerA, password: PASSWORD }).expect(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), refreshToken: expect.stringMatching(/^rt_/), expiresInSeconds: 900 });
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${res.body.accessToken}`).expect(200);
    expect(me.body.user).toMatchObject({ id: ids.readerA, email: f.emails.readerA });
    expect(me.body.session).toMatchObject({ scope: 'organization', orgId: ids.orgA, mfa: false });
  });

  it('answers a wrong password and an unknown email with the same 401 body', async () => {
    const wrong = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.readerA, password: 'nope-nope-nope' }).expect(401);
    const unknown = await request(t.http).post('/api/v1/auth/login').send({ email: `ghost-${f.emails.readerA}`, password: PASSWORD }).expect(401);
    const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
    expect(strip(wrong.body)).toEqual(strip(unknown.body));
    expect(wrong.body).toMatchObject({ success: false, statusCode: 401, code: 'invalid_credentials', error: 'Invalid email or password' });
  });

  it('asks an MFA-enrolled user for a code, then issues an MFA-satisfied session', async () => {
    const first = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.adminA, password: PASSWORD }).expect(200);
    expect(first.body).toEqual({ mfaRequired: true, mfaToken: expect.any(String) });
    await request(t.http).post('/api/v1/auth/mfa/verify').send({ mfaToken: first.body.mfaToken, code: '000000' }).expect(401);
    const code = MfaService.currentCode(TOTP_SECRET);
    const ok = await request(t.http).post('/api/v1/auth/mfa/verify').send({ mfaToken: first.body.mfaToken, code }).expect(200);
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${ok.body.accessToken}`).expect(200);
    expect(me.body.session.mfa).toBe(true);
    // the challenge is single use
    const again = await request(t.http).post('/api/v1/auth/mfa/verify').send({ mfaToken: first.body.mfaToken, code }).expect(401);
    expect(again.body.code).toBe('invalid_mfa_token');
    // and so is the code's time step, even on a fresh challenge
    const second = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.adminA, password: PASSWORD }).expect(200);
    const replay = await request(t.http).post('/api/v1/auth/mfa/verify').send({ mfaToken: second.body.mfaToken, code }).expect(401);
    expect(replay.body.code).toBe('invalid_mfa_code');
  });

  it('rotates refresh tokens and revokes the whole session when a rotated token is reused', async () => {
    const login = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.tech, password: PASSWORD }).expect(200);
    const r1 = login.body.refreshToken;
    const second = await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: r1 }).expect(200);
    expect(second.body.refreshToken).not.toBe(r1);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${second.body.accessToken}`).expect(200);
    const reuse = await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: r1 }).expect(401);
    expect(reuse.body.code).toBe('invalid_refresh_token');
    // the family is revoked: the newest refresh token and the access token stop working too
    await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: second.body.refreshToken }).expect(401);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${second.body.accessToken}`).expect(401);
  });

  it('locks out the access token of a session after logout', async () => {
    const login = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.adminB, password: PASSWORD }).expect(200);
    const auth = `Bearer ${login.body.accessToken}`;
    await request(t.http).get('/api/v1/organizations').set('Authorization', auth).expect(200);
    await request(t.http).post('/api/v1/auth/logout').set('Authorization', auth).expect(200);
    const after = await request(t.http).get('/api/v1/organizations').set('Authorization', auth).expect(401);
    expect(after.body.code).toBe('unauthenticated');
  });

  it('rejects a forged access token signed with another key', async () => {
    const { SignJWT } = await import('jose');
    const forged = await new SignJWT({ sid: ids.adminA, scope: 'organization', orgId: ids.orgA, mfa: true, typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(ids.adminA)
      .setIssuer('rmm-identity')
      .setAudience('rmm-api')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('x'.repeat(48)));
    await request(t.http).get('/api/v1/organizations').set('Authorization', `Bearer ${forged}`).expect(401);
  });
});

describe('with the caller cache enabled', () => {
  let t: TestApp;
  let f: ReturnType<typeof tenantFixture>;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    f = tenantFixture();
    await t.seed(f);
  });
  afterAll(() => t.close());

  it('still locks out a session the moment it is logged out on this instance', async () => {
    const login = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.readerA, password: PASSWORD }).expect(200);
    const auth = `Bearer ${login.body.accessToken}`;
    await request(t.http).get('/api/v1/auth/me').set('Authorization', auth).expect(200);
    await request(t.http).post('/api/v1/auth/logout').set('Authorization', auth).expect(200);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', auth).expect(401);
  });

  it('still locks out a session revoked by refresh-token reuse', async () => {
    const login = await request(t.http).post('/api/v1/auth/login').send({ email: f.emails.adminB, password: PASSWORD }).expect(200);
    const next = await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: login.body.refreshToken }).expect(200);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${next.body.accessToken}`).expect(200);
    await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: login.body.refreshToken }).expect(401);
    await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${next.body.accessToken}`).expect(401);
  });
});
