/**
 * Attempts before an undeliverable push is given up. With the doubling below, the eighth attempt
 * comes about ten and a half minutes after the first, inside the default 15-minute pending TTL.
 */
export const PUSH_MAX_ATTEMPTS = 8;
const FIRST_DELAY_SECONDS = 5;

/**
 * Seconds to wait after failed attempt number `attempt` (1-based): 5, 10, 20, … doubling; null
 * when the attempts are used up. An approval request lapses with its elevation request's pending
 * TTL, and the worker cancels a push whose approval request can no longer be decided.
 */
export function retryDelaySeconds(attempt: number): number | null {
  if (attempt >= PUSH_MAX_ATTEMPTS) return null;
  return FIRST_DELAY_SECONDS * 2 ** (attempt - 1);
}
