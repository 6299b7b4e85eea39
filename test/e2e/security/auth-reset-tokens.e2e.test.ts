import request from 'supertest';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { startSmtpSink, SmtpSink } from '../../support/smtp-sink';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { authApi, freshIp, resetTokenIn } from './auth-attack.kit';

/**
 * Issue 13 item 14c: a reset link found later in a mailbox (or a mail archive) must not outlive
 * a newer reset link, a password change or a completed reset.
 */
describe('outstanding password reset links', () => {
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

  /** Asks for a reset link and returns its token, read from the mail the user receives. */
  async function resetLink(email: string): Promise<string> {
    const before = sink.to(email).length;
    await request(t.http).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', freshIp()).send({ email }).expect(200);
    await sink.waitFor(email, (m) => sink.to(email).indexOf(m) >= before);
    return resetTokenIn(sink.to(email)[before].text);
  }
  const reset = (token: string, password = 'a-completely-new-password') =>
    request(t.http).post('/api/v1/auth/reset-password').set('X-Forwarded-For', freshIp()).send({ token, password });

  it('refuses an older reset link once a newer one was issued', async () => {
    const f = tenantFixture();
    await t.seed(f);
    const older = await resetLink(f.emails.readerA);
    const newer = await resetLink(f.emails.readerA);
    expect((await reset(older).expect(400)).body.code).toBe('invalid_reset_token');
    await reset(newer).expect(200);
  });

  it('refuses an outstanding reset link after the password was changed', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const link = await resetLink(f.emails.readerA);
    const session = await t.token(ids.readerA);
    await api.post('/auth/change-password', session, { currentPassword: PASSWORD, newPassword: 'the-owner-changed-it' }).expect(200);
    expect((await reset(link).expect(400)).body.code).toBe('invalid_reset_token');
    await api.login(f.emails.readerA, 'the-owner-changed-it').expect(200);
  });

  it('leaves no usable reset link behind a completed reset', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const link = await resetLink(f.emails.readerA);
    await reset(link).expect(200);
    expect((await reset(link, 'yet-another-password').expect(400)).body.code).toBe('invalid_reset_token');
    const open = await ownerQuery(`SELECT 1 FROM password_reset_tokens WHERE user_id = $1 AND used_at IS NULL`, [ids.readerA]);
    expect(open).toHaveLength(0);
  });

  it('lets the database hold at most one unused reset token per account', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    await ownerQuery(`INSERT INTO password_reset_tokens (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '1 hour')`, [ids.readerA, 'a'.repeat(64)]);
    await expect(
      ownerQuery(`INSERT INTO password_reset_tokens (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '1 hour')`, [ids.readerA, 'b'.repeat(64)]),
    ).rejects.toThrow(/duplicate key|unique/i);
  });
});
