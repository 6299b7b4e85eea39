import { Client } from 'pg';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { authApi, codeAt, freshIp, sessionCount, wrongCode } from './auth-attack.kit';

/**
 * Issue 13 item 6: the second sign-in step must be a server-side, single-use challenge with an
 * attempt budget of its own and an account-wide budget, whatever addresses the codes come from.
 */
describe('MFA challenge brute force and reuse', () => {
  let t: TestApp;
  let api: ReturnType<typeof authApi>;

  beforeAll(async () => {
    t = await startTestApp();
    api = authApi(t);
  });
  afterAll(() => t.close());

  async function enrolledUser() {
    const f = tenantFixture();
    const ids = await t.seed(f);
    return { email: f.emails.adminA, userId: ids.adminA, f, ids };
  }

  it('burns a challenge after five wrong codes, so a sixth wrong code and then the right one are refused', async () => {
    const { email, userId } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      expect((await api.verify(mfaToken, wrongCode(), ip).expect(401)).body.code).toBe('invalid_mfa_code');
    }
    expect((await api.verify(mfaToken, wrongCode(), ip).expect(401)).body.code).toBe('invalid_mfa_token');
    const right = await api.verify(mfaToken, codeAt(0), ip).expect(401);
    expect(right.body).toMatchObject({ success: false, statusCode: 401, code: 'invalid_mfa_token' });
    expect(await sessionCount(userId)).toBe(0);
  });

  it('counts wrong codes sent from many client addresses against the same challenge', async () => {
    const { email, userId } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    for (let i = 0; i < 5; i++) await api.verify(mfaToken, wrongCode(), freshIp()).expect(401);
    expect((await api.verify(mfaToken, codeAt(0), freshIp()).expect(401)).body.code).toBe('invalid_mfa_token');
    expect(await sessionCount(userId)).toBe(0);
  });

  it('opens one session when the right code is sent twice in a row on one challenge, even with the next step’s code', async () => {
    const { email, userId } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    await api.verify(mfaToken, codeAt(0)).expect(200);
    const again = await api.verify(mfaToken, codeAt(1)).expect(401);
    expect(again.body.code).toBe('invalid_mfa_token');
    expect(await sessionCount(userId)).toBe(1);
  });

  it('opens one session when two right codes race on one challenge', async () => {
    const { email, userId } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    const results = await Promise.all([api.verify(mfaToken, codeAt(1)), api.verify(mfaToken, codeAt(0))]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    expect(await sessionCount(userId)).toBe(1);
  });

  it('stops an account after ten wrong codes across challenges within fifteen minutes, with Retry-After', async () => {
    const { email, userId } = await enrolledUser();
    for (let c = 0; c < 2; c++) {
      const mfaToken = await api.challenge(email, PASSWORD);
      for (let i = 0; i < 5; i++) await api.verify(mfaToken, wrongCode()).expect(401);
    }
    const fresh = await api.challenge(email, PASSWORD);
    const res = await api.verify(fresh, codeAt(0)).expect(429);
    expect(res.body).toMatchObject({ success: false, statusCode: 429, code: 'rate_limited', retryAfter: expect.any(Number) });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    expect(await sessionCount(userId)).toBe(0);
  });

  it('keeps the account budget of one user from affecting another user', async () => {
    const victim = await enrolledUser();
    const other = await enrolledUser();
    for (let c = 0; c < 2; c++) {
      const mfaToken = await api.challenge(victim.email, PASSWORD);
      for (let i = 0; i < 5; i++) await api.verify(mfaToken, wrongCode()).expect(401);
    }
    await api.verify(await api.challenge(other.email, PASSWORD), codeAt(0)).expect(200);
  });

  it('refuses a challenge issued before the password was changed', async () => {
    const { email, userId } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    const access = await t.token(userId, { mfa: true });
    await api.post('/auth/change-password', access, { currentPassword: PASSWORD, newPassword: 'an-entirely-new-password' }).expect(200);
    expect((await api.verify(mfaToken, codeAt(0)).expect(401)).body.code).toBe('invalid_mfa_token');
  });

  it('does not accept an mfaToken as an access token', async () => {
    const { email } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    await api.get('/auth/me', mfaToken).expect(401);
  });

  it('stores challenges hashed, and the request role sees them only in system context', async () => {
    const { email, userId } = await enrolledUser();
    const mfaToken = await api.challenge(email, PASSWORD);
    const rows = await ownerQuery<{ token_hash: string }>(`SELECT token_hash FROM mfa_challenges WHERE user_id = $1`, [userId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).not.toContain(mfaToken);
    const app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await app.connect();
    try {
      await app.query('BEGIN');
      await app.query(`SELECT set_config('app.scope', 'organization', true), set_config('app.user_id', $1, true)`, [userId]);
      expect((await app.query(`SELECT count(*)::int AS n FROM mfa_challenges`)).rows[0].n).toBe(0);
      await app.query('ROLLBACK');
    } finally {
      await app.end();
    }
  });
});
