import request from 'supertest';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * The client address behind a proxy comes from X-Forwarded-For only for the proxies TRUST_PROXY
 * names. A client that sets the header itself must not get a fresh rate-limit bucket per request.
 */
describe('TRUST_PROXY decides whose X-Forwarded-For names the client', () => {
  const attempts = async (t: TestApp): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 1; i <= 11; i++) {
      const res = await request(t.http)
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', `203.0.113.${i}`)
        .send({ email: 'nobody-behind-a-proxy@example.com', password: 'wrong-password' });
      statuses.push(res.status);
    }
    return statuses;
  };

  it('ignores the header when no proxy is trusted, so its eleventh attempt on one account is limited', async () => {
    const t = await startTestApp({ TRUST_PROXY: '0' });
    try {
      const statuses = await attempts(t);
      expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
      expect(statuses[10]).toBe(429);
    } finally {
      await t.close();
    }
  });

  it('believes it from a trusted proxy (here the loopback one, the default), one address per client', async () => {
    const t = await startTestApp();
    try {
      expect(await attempts(t)).toEqual(Array(11).fill(401));
    } finally {
      await t.close();
    }
  });
});
