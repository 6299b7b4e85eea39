/** Agent ingest: 10 requests per second per device with bursts of 20 (docs/api-conventions.md, rate limits). */
export const INGEST_RATE_PER_SECOND = 10;
export const INGEST_BURST = 20;

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until a token is available again (Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
}

/**
 * A token bucket per device, shared by every instance of the service. Implementations: Redis
 * (REDIS_URL set) or a PostgreSQL row per device.
 */
export abstract class DeviceRateLimiter {
  /**
   * 'standalone': call take() before any other work. 'database': the bucket is a row that the
   * caller's transaction locks until commit, so spend it as late as possible: with take(), or
   * inside the statement that writes the request (app_agent_rate_bucket_take).
   */
  abstract readonly placement: 'standalone' | 'database';
  abstract take(orgId: string, deviceId: string): Promise<RateDecision>;
}
