/**
 * Seconds before the next attempt after failed attempt number `attempt` (1-based), the schedule the
 * Standard Webhooks specification recommends: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 10 h. Delays of
 * five minutes and more are spread by up to a tenth (`jitter` in [0, 1)), so the messages a receiver's
 * outage held back do not all come back in the same second.
 */
const SCHEDULE_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600];
const LAST_SECONDS = 10 * 3600;
/** How long a message is retried after it was queued (or queued again by a redelivery). */
export const WEBHOOK_RETRY_WINDOW_HOURS = 24;

export function webhookRetryDelaySeconds(attempt: number, jitter = 0): number {
  const base = SCHEDULE_SECONDS[attempt - 1] ?? LAST_SECONDS;
  return base >= 300 ? Math.round(base * (1 + jitter / 10)) : base;
}

/**
 * When a failed message is tried next, or null when it is dead: the delay above, brought forward to
 * the end of the retry window when it would pass it, so the last attempt comes at the window's end.
 */
export function nextAttemptAt(attempt: number, now: Date, retryUntil: Date, jitter = 0): Date | null {
  if (now.getTime() >= retryUntil.getTime()) return null;
  const next = now.getTime() + webhookRetryDelaySeconds(attempt, jitter) * 1000;
  return new Date(Math.min(next, retryUntil.getTime()));
}
