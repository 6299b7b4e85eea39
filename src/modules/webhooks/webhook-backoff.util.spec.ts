import { nextAttemptAt, webhookRetryDelaySeconds } from './webhook-backoff.util';

describe('webhook retry backoff', () => {
  it('follows 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 10 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => webhookRetryDelaySeconds(n))).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000, 36000]);
  });

  it('spreads delays of five minutes and more by at most a tenth, and never the first', () => {
    expect(webhookRetryDelaySeconds(1, 0.99)).toBe(5);
    expect(webhookRetryDelaySeconds(2, 0.99)).toBe(Math.round(300 * 1.099));
    expect(webhookRetryDelaySeconds(6, 0.5)).toBe(37800);
  });

  it('brings the last attempt forward to the end of the 24-hour window, and gives up once it has passed', () => {
    const queued = new Date('2030-01-01T00:00:00Z');
    const until = new Date(queued.getTime() + 24 * 3600_000);
    const at = (h: number) => new Date(queued.getTime() + h * 3600_000);
    expect(nextAttemptAt(1, queued, until)).toEqual(new Date(queued.getTime() + 5000));
    expect(nextAttemptAt(7, at(17.6), until)).toEqual(until);
    expect(nextAttemptAt(8, until, until)).toBeNull();
  });

  it('makes the first seven attempts inside the window and an eighth at its end', () => {
    const queued = new Date('2030-01-01T00:00:00Z');
    const until = new Date(queued.getTime() + 24 * 3600_000);
    let now: Date | null = queued;
    const times: Date[] = [];
    for (let attempt = 1; now; attempt++) {
      times.push(now);
      now = nextAttemptAt(attempt, now, until);
    }
    expect(times).toHaveLength(8);
    expect(times[7]).toEqual(until);
  });
});
