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

/**
 * The bucket in Redis when REDIS_URL is set. If Redis cannot answer, ingest goes on unlimited
 * (and says so in the log): a consent prompt left unrecorded is worse than a device briefly
 * above its rate.
 */
export class RedisRateLimiter extends DeviceRateLimiter implements OnModuleDestroy {
  readonly placement = 'standalone';
  private readonly logger = new Logger('IngestRateLimit');
  private readonly redis: Redis;
  private readonly takeToken: TakeCommand;

  constructor(url: string) {
    super();
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    this.redis.on('error', (e: Error) => this.logger.warn(`Redis: ${e.message}`));
    this.redis.defineCommand('pamIngestTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.takeToken = (this.redis as unknown as { pamIngestTake: TakeCommand }).pamIngestTake.bind(this.redis);
  }

  async take(orgId: string, deviceId: string): Promise<RateDecision> {
    try {
      const wait = Number(await this.takeToken(`pam:ingest-rate:${orgId}:${deviceId}`, INGEST_RATE_PER_SECOND, INGEST_BURST));
      return wait > 0 ? { allowed: false, retryAfterSeconds: wait } : { allowed: true, retryAfterSeconds: 0 };
    } catch (e) {
      this.logger.warn(`Ingest rate limit not applied, Redis failed: ${(e as Error).message}`);
      return { allowed: true, retryAfterSeconds: 0 };
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.redis.disconnect();
  }
}
