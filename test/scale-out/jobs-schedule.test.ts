import { JobsService, JobRun } from '../../src/infra/jobs/jobs.service';
import { ownerQuery, TestApp } from '../support/test-app';
import { BOOT_TIMEOUT_MS, closeInstances, startInstances } from './scale-out.kit';

const TICK_QUEUE = 'jobs_test_tick';
const FAILING_QUEUE = 'jobs_test_failing';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * pg-boss across three instances of the service (request role through PgBouncer, pg-boss on the
 * owner connection). The instances work only this file's queues (JOBS_TEST_QUEUES), so the
 * sweeps of the shared test database stay with the files that drive them.
 */
describe('background jobs on pg-boss with three instances up', () => {
  let instances: TestApp[];
  const jobs = (i: number) => instances[i].app.get(JobsService);

  beforeAll(async () => {
    instances = await startInstances(3, { START_JOBS: 'true', JOBS_TEST_QUEUES: [TICK_QUEUE, FAILING_QUEUE].join(',') });
  }, BOOT_TIMEOUT_MS);
  afterAll(() => closeInstances(instances));

  it('runs a recurring job exactly once per period, whichever instance takes each slot', async () => {
    const period = 2;
    const runs: { instance: number; jobId: string; slot: number }[] = [];
    await Promise.all(
      instances.map((_, i) =>
        jobs(i).every(TICK_QUEUE, period, async (_data, run: JobRun) => {
          runs.push({ instance: i, jobId: run.id, slot: (run.slot as Date).getTime() / 1000 });
        }),
      ),
    );
    await sleep(13_000);
    // Every instance offered every slot (twice per period each); one run per slot came of it.
    const slots = runs.map((r) => r.slot).sort((a, b) => a - b);
    expect(new Set(runs.map((r) => r.jobId)).size).toBe(runs.length);
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.length).toBeGreaterThanOrEqual(5);
    for (let k = 1; k < slots.length; k++) expect(slots[k] - slots[k - 1]).toBe(period);
    const stored = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 GROUP BY singleton_on HAVING count(*) > 1`, [TICK_QUEUE]);
    expect(stored).toEqual([]);
  }, 30_000);

  it('retries a failing job with growing delays on any instance and leaves it failed, with its error, after the retry limit', async () => {
    const attempts: { instance: number; retryCount: number; at: number }[] = [];
    await Promise.all(
      instances.map((_, i) =>
        jobs(i).work(
          FAILING_QUEUE,
          async (_data, run: JobRun) => {
            attempts.push({ instance: i, retryCount: run.retryCount, at: Date.now() });
            throw new Error('push gateway answered HTTP 503');
          },
          { retryLimit: 3, retryDelaySeconds: 1, retryBackoff: true },
        ),
      ),
    );
    const id = await jobs(1).send(FAILING_QUEUE, { what: 'a push' });
    expect(id).toEqual(expect.any(String));
    const deadline = Date.now() + 40_000;
    let state = '';
    while (Date.now() < deadline) {
      [{ state }] = await ownerQuery<{ state: string }>(`SELECT state::text FROM pgboss.job WHERE id = $1`, [id]);
      if (state === 'failed') break;
      await sleep(250);
    }
    // The operator's query of docs/operations.md finds it, with the handler's error.
    const failed = await ownerQuery<{ id: string; retry_count: number; output: { message?: string } }>(
      `SELECT id, retry_count, output FROM pgboss.job WHERE name = $1 AND state = 'failed'`,
      [FAILING_QUEUE],
    );
    expect(failed).toEqual([expect.objectContaining({ id, retry_count: 3 })]);
    expect(failed[0].output.message).toBe('push gateway answered HTTP 503');
    expect(attempts.map((a) => a.retryCount)).toEqual([0, 1, 2, 3]);
    // Backoff: each retry waited longer than the one before (pg-boss doubles the delay, with jitter).
    const gaps = attempts.slice(1).map((a, k) => a.at - attempts[k].at);
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[2]).toBeGreaterThan(gaps[0]);
  }, 60_000);
});
