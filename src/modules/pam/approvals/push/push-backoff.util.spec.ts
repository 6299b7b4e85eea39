import { PUSH_MAX_ATTEMPTS, retryDelaySeconds } from './push-backoff.util';

describe('retryDelaySeconds', () => {
  it('doubles the wait after each failed attempt, starting at five seconds', () => {
    expect([1, 2, 3, 4].map(retryDelaySeconds)).toEqual([5, 10, 20, 40]);
  });

  it('gives up once the last attempt has failed', () => {
    expect(retryDelaySeconds(PUSH_MAX_ATTEMPTS - 1)).toBe(5 * 2 ** (PUSH_MAX_ATTEMPTS - 2));
    expect(retryDelaySeconds(PUSH_MAX_ATTEMPTS)).toBeNull();
    expect(retryDelaySeconds(PUSH_MAX_ATTEMPTS + 3)).toBeNull();
  });

  it('spends every retry within the default 15-minute pending TTL', () => {
    let total = 0;
    for (let attempt = 1; retryDelaySeconds(attempt) !== null; attempt++) total += retryDelaySeconds(attempt)!;
    expect(total).toBeLessThan(15 * 60);
  });
});
