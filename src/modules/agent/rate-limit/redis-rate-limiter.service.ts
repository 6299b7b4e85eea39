import { Logger, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { DeviceRateLimiter, INGEST_BURST, INGEST_RATE_PER_SECOND, RateDecision } from './device-rate-limiter';

/**
 * Refill and debit in one Lua script, atomic on the Redis server; the server's clock (TIME) is
 * the only clock, so instances with skewed clocks still share one bucket. The refill instant
 * never moves back. Returns 0 when a token was taken, else the whole seconds until the next one.
 */
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(math.max(now, ts)))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
if allowed == 1 then return 0 end
return math.ceil((1 - tokens) / rate)
`;

type TakeCommand = (key: string, rate: number, burst: number) => Promise<number>;

/** How long one token may wait on Redis before the PostgreSQL bucket is used instead. */
export const REDIS_TAKE_TIMEOUT_MS = 500;

/**
 * The bucket in Redis when REDIS_URL is set. If Redis cannot answer (stopped, unreachable, slower
 * than REDIS_TAKE_TIMEOUT_MS), the token comes from the device's PostgreSQL bucket instead, the
 * one used without Redis: the limit holds across instances during the outage, and no prompt is
 * refused or delayed because Redis is down. The log says so once per outage.
 */
export class RedisRateLimiterService extends DeviceRateLimiter implements OnModuleDestroy {
  readonly placement = 'standalone';
  private readonly logger = new Logger('IngestRateLimit');
  private readonly redis: Redis;
  private readonly takeToken: TakeCommand;
  private degraded = false;

  constructor(
    url: string,
    private readonly fallback: DeviceRateLimiter,
    timeoutMs = REDIS_TAKE_TIMEOUT_MS,
  ) {
    super();
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: false,
      commandTimeout: timeoutMs,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    // Reconnection errors repeat every retry; the outage is logged once, by take().
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('pamIngestTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.takeToken = (this.redis as unknown as { pamIngestTake: TakeCommand }).pamIngestTake.bind(this.redis);
  }

  async take(orgId: string, deviceId: string): Promise<RateDecision> {
    try {
      const wait = Number(await this.takeToken(`pam:ingest-rate:${orgId}:${deviceId}`, INGEST_RATE_PER_SECOND, INGEST_BURST));
      if (this.degraded) {
        this.degraded = false;
        this.logger.log('Redis answers again: ingest rate limits are counted in Redis again');
      }
      return wait > 0 ? { allowed: false, retryAfterSeconds: wait } : { allowed: true, retryAfterSeconds: 0 };
    } catch (e) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger.warn(`Redis unavailable (${(e as Error).message}): ingest rate limits are counted in PostgreSQL until it answers`);
      }
      return this.fallback.take(orgId, deviceId);
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.redis.disconnect();
  }
}
