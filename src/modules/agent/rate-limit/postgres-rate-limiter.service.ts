import { Injectable } from '@nestjs/common';
import { Db, prepared } from '../../../infra/database/db.service';
import { DeviceRateLimiter, INGEST_BURST, INGEST_RATE_PER_SECOND, RateDecision } from './device-rate-limiter';

/**
 * Refills the device's bucket and takes one token, returning a row only when a token was there.
 * `org` and `device` are SQL expressions (placeholders), so the statement can also ride as a CTE
 * on the statement that writes the request.
 *
 * One row per device, updated by a single upsert: concurrent requests of one device queue on the
 * row, so no two can spend the same token, on one instance or many. The clock is read once the
 * row is locked (clock_timestamp in the update itself, not the transaction or statement start),
 * and refilled_at never moves back: a request that waited for the row must not refill from an
 * instant before the last debit, or the waiters of a burst would each mint tokens.
 */
export function bucketTakeSql(org: string, device: string): string {
  const refilled = `least(${INGEST_BURST}, b.tokens + ${INGEST_RATE_PER_SECOND} * greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at)))`;
  return `INSERT INTO agent_rate_buckets AS b (org_id, device_id, tokens, refilled_at)
          VALUES (${org}, ${device}, ${INGEST_BURST - 1}, clock_timestamp())
          ON CONFLICT (org_id, device_id) DO UPDATE
             SET tokens = ${refilled} - 1, refilled_at = greatest(b.refilled_at, clock_timestamp())
           WHERE ${refilled} >= 1
          RETURNING tokens`;
}

const TAKE = prepared('agent_rate_bucket_take', bucketTakeSql('$1::uuid', '$2::uuid'));

/** A token comes back within 1 / rate seconds; Retry-After counts whole seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

@Injectable()
export class PostgresRateLimiter extends DeviceRateLimiter {
  readonly placement = 'database';

  constructor(private readonly db: Db) {
    super();
  }

  async take(orgId: string, deviceId: string): Promise<RateDecision> {
    const row = await this.db.one(TAKE, [orgId, deviceId]);
    return row ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS };
  }
}
