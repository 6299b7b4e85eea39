import { loadConfig } from '../config/app-config';
import { effectivePeriodSeconds, offerEveryMs, queueEnabled, slotOf } from './job-timing';
import { JobsService } from './jobs.service';

describe('job timing', () => {
  it('keeps a sub-minute period unless a test overrides it', () => {
    expect(effectivePeriodSeconds(15)).toBe(15);
    expect(effectivePeriodSeconds(15, 1)).toBe(1);
  });

  it('refuses a period that cron should express, or that is not a whole number of seconds from 1 to 60', () => {
    for (const bad of [0, 61, 1.5, -3, 3600]) expect(() => effectivePeriodSeconds(bad)).toThrow(/from 1 to 60/);
  });

  it('offers a run twice per period, never more often than every 250 ms', () => {
    expect(offerEveryMs(15)).toBe(7500);
    expect(offerEveryMs(2)).toBe(1000);
    expect(offerEveryMs(1)).toBe(500);
    expect(offerEveryMs(0.1)).toBe(250);
  });

  it('puts two moments of one period in the same slot and the next period in the next slot, as pg-boss does', () => {
    expect(slotOf(new Date('2026-01-01T00:00:15.000Z'), 15)).toBe(slotOf(new Date('2026-01-01T00:00:29.999Z'), 15));
    expect(slotOf(new Date('2026-01-01T00:00:30.000Z'), 15) - slotOf(new Date('2026-01-01T00:00:29.999Z'), 15)).toBe(15);
  });

  it('works every queue unless a test names the only ones it wants', () => {
    expect(queueEnabled('pam_expiry_sweep')).toBe(true);
    expect(queueEnabled('pam_expiry_sweep', ['imports_run'])).toBe(false);
    expect(queueEnabled('imports_run', ['imports_run'])).toBe(true);
  });
});

describe('JobsService without START_JOBS', () => {
  const config = () => loadConfig({ NODE_ENV: 'test', SECRET_ENCRYPTION_KEY: 'k'.repeat(40), JWT_SECRET: 'j'.repeat(40), START_JOBS: 'false' });

  it('starts nothing, ignores registrations and refuses to send, so callers run the work themselves', async () => {
    const jobs = new JobsService(config());
    await jobs.every('pam_expiry_sweep', 15, async () => undefined);
    await jobs.schedule('sso_state_cleanup', '* * * * *', async () => undefined);
    await jobs.onApplicationBootstrap();
    expect(jobs.running).toBe(false);
    expect(jobs.client).toBeNull();
    await expect(jobs.send('imports_run', { importId: 'x' })).rejects.toThrow(/START_JOBS/);
    await jobs.stop(1000);
  });
});

describe('test-only job settings', () => {
  const base = { SECRET_ENCRYPTION_KEY: 'k'.repeat(40), JWT_SECRET: 'j'.repeat(40) };

  it('are refused outside NODE_ENV=test', () => {
    expect(() => loadConfig({ ...base, NODE_ENV: 'development', JOBS_TEST_INTERVAL_SECONDS: '1' })).toThrow(/only when NODE_ENV=test/);
    expect(() => loadConfig({ ...base, NODE_ENV: 'development', JOBS_TEST_QUEUES: 'imports_run' })).toThrow(/only when NODE_ENV=test/);
  });

  it('are read in tests, and the interval is bounded', () => {
    expect(loadConfig({ ...base, NODE_ENV: 'test', JOBS_TEST_INTERVAL_SECONDS: '2', JOBS_TEST_QUEUES: 'a, b' }).jobsTest).toEqual({ intervalSeconds: 2, queues: ['a', 'b'] });
    expect(() => loadConfig({ ...base, NODE_ENV: 'test', JOBS_TEST_INTERVAL_SECONDS: '0' })).toThrow(/JOBS_TEST_INTERVAL_SECONDS/);
  });
});
