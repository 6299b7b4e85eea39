import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import { DeviceRateLimiter, INGEST_BURST, INGEST_RATE_PER_SECOND, RateDecision } from './device-rate-limiter';

/**
 * The bucket as one row per device (agent_rate_buckets), refilled and debited by a single
 * upsert: concurrent requests of one device queue on the row, so no two can spend the same
 * token, on one instance or many. The clock is read once the row is locked (clock_timestamp in
 * the update itself, not the transaction or statement start), and refilled_at never moves
 * back: a request that waited for the row must not refill from an instant before the last
 * debit, or the waiters of a burst would each mint tokens.
 */
@Injectable()
export class PostgresRateLimiter extends DeviceRateLimiter {
  readonly placement = 'transaction';

  constructor(private readonly db: Db) {
    super();
  }

  async take(orgId: string, deviceId: string): Promise<RateDecision> {
    const row = await this.db.one<{ tokens: number }>(
      `INSERT INTO agent_rate_buckets AS b (org_id, device_id, tokens, refilled_at)
       VALUES ($1, $2, $4::double precision - 1, clock_timestamp())
       ON CONFLICT (org_id, device_id) DO UPDATE
          SET tokens = least($4, b.tokens + $3 * greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at))) - 1,
              refilled_at = greatest(b.refilled_at, clock_timestamp())
        WHERE least($4, b.tokens + $3 * greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at))) >= 1
       RETURNING tokens`,
      [orgId, deviceId, INGEST_RATE_PER_SECOND, INGEST_BURST],
    );
    // A token comes back within 1 / rate seconds; Retry-After counts whole seconds.
    return row ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: 1 };
  }
}
