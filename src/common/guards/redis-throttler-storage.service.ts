import { Logger, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import Redis from 'ioredis';

/** How long one rate-limit count may wait on Redis before this instance counts it itself. */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The rate-limit counters of every `@Throttle` route and of the extra sign-in limits, in Redis
 * (REDIS_URL), shared by every instance. When Redis does not answer (stopped, unreachable, slower
 * than REDIS_COMMAND_TIMEOUT_MS), the count goes to this instance's own memory instead, so the
 * limits never vanish and no request fails or waits on Redis: during the outage each instance
 * enforces the limits on what it sees (with N instances a client may get up to N times the budget).
 * The log says so once when Redis fails and once when it answers again; shared counting resumes
 * with the first count Redis accepts.
 */
export class RedisThrottlerStorageService implements ThrottlerStorage, OnModuleDestroy {
  private readonly logger = new Logger('RateLimitStorage');
  private readonly redis: Redis;
  private readonly shared: ThrottlerStorageRedisService;
  private readonly local = new ThrottlerStorageService();
  private degraded = false;

  constructor(url: string, commandTimeoutMs = REDIS_COMMAND_TIMEOUT_MS) {
    // No offline queue and no per-command retries: a command fails at once while the connection is down.
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      commandTimeout: commandTimeoutMs,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    // Reconnection errors repeat every retry; the outage is logged once, by increment().
    this.redis.on('error', () => undefined);
    this.shared = new ThrottlerStorageRedisService(this.redis);
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    try {
      const record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
      if (this.degraded) {
        this.degraded = false;
        this.logger.log('Redis answers again: rate limits are counted in Redis again');
      }
      return record;
    } catch (e) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger.warn(`Redis unavailable (${(e as Error).message}): rate limits are counted on this instance until it answers`);
      }
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
  }

  onModuleDestroy(): void {
    this.local.onApplicationShutdown();
    this.redis.disconnect();
  }
}
