import { authenticator } from 'otplib';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { startSmtpSink, SmtpSink } from '../../support/smtp-sink';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { authApi, codeAt, sessionIdOf } from './auth-attack.kit';

/**
 * Issue 13 item 7: a stolen password-only access token must not be able to enrol the attacker's
 * authenticator, and enrolling must never turn the current session into an MFA session.
 */
describe('MFA enrolment with a stolen password-only token', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let api: ReturnType<typeof authApi>;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ SMTP_URL: sink.url });
    api = authApi(t);
  });
  afterAll(async () => {
    await t.close();
    await sink.stop();
  });

  const pending = async (userId: string) =>
    (await ownerQuery<{ totp_pending_secret: string | null }>(`SELECT totp_pending_secret FROM users WHERE id = $1`, [userId]))[0].totp_pending_secret;

  /** A user without MFA, signed in with the password: the attacker's stolen token. */
  async function passwordOnlySession() {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const login = await api.login(f.emails.adminB, PASSWORD).expect(200);
    return { f, ids, userId: ids.adminB, email: f.emails.adminB, access: login.body.accessToken as string, refresh: login.body.refreshToken as string };
  }

  it('refuses to start enrolment without the current password, or with a wrong one', async () => {
    const { access, userId } = await passwordOnlySession();
    const none = await api.post('/auth/mfa/enroll', access, {}).expect(400);
    expect(none.body).toMatchObject({ success: false, code: 'invalid_current_password' });
    const wrong = await api.post('/auth/mfa/enroll', access, { password: 'not-the-password' }).expect(400);
    expect(wrong.body.code).toBe('invalid_current_password');
    expect(await pending(userId)).toBeNull();
  });

  it('leaves the session that activates MFA without MFA, also after a refresh', async () => {
    const { access, refresh } = await passwordOnlySession();
    const enrol = await api.post('/auth/mfa/enroll', access, { password: PASSWORD }).expect(200);
    expect(enrol.body).toEqual({ secret: expect.any(String), otpauthUrl: expect.stringMatching(/^otpauth:\/\/totp\//) });
    await api.post('/auth/mfa/activate', access, { code: authenticator.generate(enrol.body.secret) }).expect(200);

    const gated = await api.post('/roles', access, { name: 'x', permissions: ['devices:read'] }).expect(403);
    expect(gated.body.code).toBe('mfa_required');
    expect((await api.get('/auth/me', access).expect(200)).body).toMatchObject({ user: { mfaEnabled: true }, session: { mfa: false } });

    const next = await api.post('/auth/refresh', access, { refreshToken: refresh }).expect(200);
    expect((await api.get('/auth/me', next.body.accessToken).expect(200)).body.session.mfa).toBe(false);
    expect((await api.post('/roles', next.body.accessToken, { name: 'x', permissions: ['devices:read'] }).expect(403)).body.code).toBe('mfa_required');
  });

  it('audits enrolment and activation and mails the account holder after activation', async () => {
    const { access, userId, email } = await passwordOnlySession();
    const enrol = await api.post('/auth/mfa/enroll', access, { password: PASSWORD }).expect(200);
    await api.post('/auth/mfa/activate', access, { code: authenticator.generate(enrol.body.secret) }).expect(200);
    const audit = await ownerQuery<{ action: string; details: Record<string, unknown> }>(
      `SELECT action, details FROM audit_logs WHERE resource_id = $1 AND action LIKE 'auth.mfa.%' ORDER BY created_at`,
      [userId],
    );
    expect(audit.map((a) => a.action)).toEqual(['auth.mfa.enroll', 'auth.mfa.activate']);
    expect(JSON.stringify(audit)).not.toContain(enrol.body.secret);
    const mail = await sink.waitFor(email, (m) => /authenticator/i.test(m.text));
    expect(mail.text).not.toContain(enrol.body.secret);
  });

  it('asks for the password and an MFA session before replacing an existing authenticator', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const mfaSession = await t.token(ids.adminA, { mfa: true });
    expect((await api.post('/auth/mfa/enroll', mfaSession, {}).expect(400)).body.code).toBe('invalid_current_password');
    const passwordOnly = await t.token(ids.adminA, { mfa: false });
    expect((await api.post('/auth/mfa/enroll', passwordOnly, { password: PASSWORD }).expect(403)).body.code).toBe('mfa_required');
    expect(await pending(ids.adminA)).toBeNull();

    const enrol = await api.post('/auth/mfa/enroll', mfaSession, { password: PASSWORD }).expect(200);
    await api.post('/auth/mfa/activate', mfaSession, { code: authenticator.generate(enrol.body.secret) }).expect(200);
    const login = await api.login(f.emails.adminA, PASSWORD).expect(200);
    // the activation used the current step, which is single use: the next step's code signs in
    await api.verify(login.body.mfaToken, codeAt(1, enrol.body.secret)).expect(200);
  });

  it('lets a user without a password enrol only within five minutes of signing in', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    await ownerQuery(`UPDATE users SET password_hash = NULL WHERE id = $1`, [ids.readerA]);
    const fresh = await t.token(ids.readerA);
    await api.post('/auth/mfa/enroll', fresh, {}).expect(200);
    await ownerQuery(`UPDATE sessions SET created_at = now() - interval '6 minutes' WHERE id = $1`, [sessionIdOf(fresh)]);
    const stale = await api.post('/auth/mfa/enroll', fresh, {}).expect(403);
    expect(stale.body.code).toBe('recent_sign_in_required');
  });

  it('does not let an API key enrol MFA for the user who created it', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const admin = await t.token(ids.adminB, { mfa: true });
    const key = await api.post('/api-keys', admin, { name: 'automation', permissions: ['organizations:read'] }).expect(201);
    const res = await api.post('/auth/mfa/enroll', key.body.key, { password: PASSWORD }).expect(403);
    expect(res.body.code).toBe('session_required');
    expect(await pending(ids.adminB)).toBeNull();
  });
});
