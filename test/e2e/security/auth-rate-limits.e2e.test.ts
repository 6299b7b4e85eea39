import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, TestApp } from '../../support/test-app';
import { authApi, freshIp } from './auth-attack.kit';

/**
 * Issue 13 item 14c: password guessing through change-password, and password spraying across
 * many accounts from one address. Each test runs on an app of its own, so the in-memory
 * counters start at zero.
 */
describe('rate limits of the password routes', () => {
  let t: TestApp;
  let api: ReturnType<typeof authApi>;

  beforeEach(async () => {
    t = await startTestApp();
    api = authApi(t);
  });
  afterEach(() => t.close());

  function expectRateLimited(res: { status: number; body: Record<string, unknown>; headers: Record<string, string> }) {
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ success: false, statusCode: 429, code: 'rate_limited', retryAfter: expect.any(Number) });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  }

  it('refuses the 31st sign-in attempt from one address within a minute, whatever the emails', async () => {
    const ip = freshIp();
    const f = tenantFixture();
    for (let i = 0; i < 30; i++) await api.login(`sprayed-${i}@${f.emails.readerA.split('@')[1]}`, 'Winter2025!', ip).expect(401);
    expectRateLimited(await api.login(`sprayed-30@${f.emails.readerA.split('@')[1]}`, 'Winter2025!', ip));
    await api.login(`sprayed-31@${f.emails.readerA.split('@')[1]}`, 'Winter2025!', freshIp()).expect(401);
  });

  it('refuses a sixth change-password attempt on one account within fifteen minutes, even from new addresses', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const stolen = await t.token(ids.readerA);
    for (let i = 0; i < 5; i++) {
      const res = await api.post('/auth/change-password', stolen, { currentPassword: `guess-number-${i}`, newPassword: 'attacker-chosen-password' }, freshIp()).expect(400);
      expect(res.body.code).toBe('invalid_current_password');
    }
    expectRateLimited(await api.post('/auth/change-password', stolen, { currentPassword: PASSWORD, newPassword: 'attacker-chosen-password' }, freshIp()));
    await api.login(f.emails.readerA, PASSWORD).expect(200);
  });

  it('refuses the eleventh change-password attempt from one address within a minute, across accounts', async () => {
    const fixtures = [tenantFixture(), tenantFixture()];
    const users: string[] = [];
    for (const f of fixtures) {
      const ids = await t.seed(f);
      users.push(ids.adminA, ids.readerA, ids.siteA1User, ids.adminB, ids.tech, ids.techA);
    }
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      await api.post('/auth/change-password', await t.token(users[i]), { currentPassword: 'a-wrong-guess', newPassword: 'attacker-chosen-password' }, ip).expect(400);
    }
    expectRateLimited(await api.post('/auth/change-password', await t.token(users[10]), { currentPassword: 'a-wrong-guess', newPassword: 'attacker-chosen-password' }, ip));
  });

  it('limits password checks on MFA enrolment per account as well', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const stolen = await t.token(ids.readerA);
    for (let i = 0; i < 5; i++) await api.post('/auth/mfa/enroll', stolen, { password: `guess-number-${i}` }, freshIp()).expect(400);
    expectRateLimited(await api.post('/auth/mfa/enroll', stolen, { password: PASSWORD }, freshIp()));
  });
});
