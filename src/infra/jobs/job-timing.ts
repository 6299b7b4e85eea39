/** pg-boss schedules fire at most once a minute; shorter periods use a throttled send (see JobsService.every). */
export const CRON_GRANULARITY_SECONDS = 60;

/**
 * The period a recurring job really runs at: its own, or in tests the override
 * (JOBS_TEST_INTERVAL_SECONDS), which applies only to sub-minute jobs so that a test cannot
 * turn an hourly job into a busy one by accident.
 */
export function effectivePeriodSeconds(periodSeconds: number, testOverride?: number): number {
  if (!Number.isInteger(periodSeconds) || periodSeconds < 1 || periodSeconds > CRON_GRANULARITY_SECONDS) {
    throw new Error(`a recurring job's period must be a whole number of seconds from 1 to ${CRON_GRANULARITY_SECONDS}, not ${periodSeconds}`);
  }
  return testOverride ?? periodSeconds;
}

/**
 * How often each instance offers the next run of a job with period `periodSeconds`. Twice per
 * period, so that a slot is offered even when one instance's timer drifts past a slot boundary;
 * the throttle key keeps it to one run per slot however many instances offer it.
 */
export function offerEveryMs(periodSeconds: number): number {
  return Math.max(250, Math.floor((periodSeconds * 1000) / 2));
}

/** The slot a moment falls in, as pg-boss computes `singleton_on` (seconds since the epoch, floored to the period). */
export function slotOf(at: Date, periodSeconds: number): number {
  return periodSeconds * Math.floor(at.getTime() / 1000 / periodSeconds);
}

/** Whether this instance schedules and works a queue (all, unless a test names the ones it wants). */
export function queueEnabled(name: string, only?: readonly string[]): boolean {
  return !only || only.includes(name);
}
