import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import { DeviceRateLimiter, INGEST_BURST, INGEST_RATE_PER_SECOND, RateDecision } from './device-rate-limiter';

/**
 * Refills the device's bucket and takes one token, returning a row only when a token was there:
 * the PL/pgSQL function app_agent_rate_bucket_take (migration 1763700800000), which ingest also
 * calls inside the statement that writes the request.
 *
 * One row per device, updated by a single upsert: concurrent requests of one device queue on the
 * row, so no two can spend the same token, on one instance or many. The clock is read once the
 * row is locked (clock_timestamp in the update itself, not the transaction or statement start),
 * and refilled_at never moves back: a request that waited for the row must not refill from an
 * instant before the last debit, or the waiters of a burst would each mint tokens.
 */
const TAKE = prepared('agent_rate_bucket_take', `SELECT tokens FROM app_agent_rate_bucket_take($1, $2, $3, $4)`);

/** A token comes back within 1 / rate seconds; Retry-After counts whole seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

@Injectable()
export class PostgresRateLimiterService extends DeviceRateLimiter {
  readonly placement = 'database';

  constructor(private readonly db: DbService) {
    super();
  }

  async take(orgId: string, deviceId: string): Promise<RateDecision> {
    const row = await this.db.one(TAKE, [orgId, deviceId, INGEST_BURST, INGEST_RATE_PER_SECOND]);
    return row ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS };
  }
}
