import Redis from 'ioredis';
import { printableUrl } from './start-failure';

/**
 * One PING to REDIS_URL, on a connection of its own that gives up after `timeoutMs` and never
 * retries. Resolves with null when Redis answered, else with what went wrong.
 */
export async function probeRedis(url: string, timeoutMs = 2000): Promise<string | null> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, commandTimeout: timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  let lastError: string | null = null;
  redis.on('error', (e: Error) => (lastError = e.message || (e as NodeJS.ErrnoException).code || String(e)));
  try {
    await redis.connect();
    const pong = await redis.ping();
    return pong === 'PONG' ? null : `unexpected answer to PING: ${pong}`;
  } catch (e) {
    return lastError ?? ((e as Error).message || String(e));
  } finally {
    redis.disconnect();
  }
}

/**
 * The warning a start prints when REDIS_URL is set but Redis does not answer: the service starts,
 * and says what it does without Redis until Redis answers.
 */
export function redisUnreachableWarning(url: string, cause: string): string {
  return [
    `Redis is unreachable: the service starts without it`,
    `  - setting: REDIS_URL (${printableUrl(url)})`,
    `  - cause: ${cause}`,
    `  - meanwhile: rate limits are counted on this instance only (with several instances a client gets up to that many times its budget), and agent ingest limits in PostgreSQL; shared counting resumes by itself once Redis answers`,
    `  - to do: start Redis there or correct REDIS_URL; on a single instance, REDIS_URL may be left unset`,
  ].join('\n');
}
