import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail, ThrottlerOptions, ThrottlerRequest } from '@nestjs/throttler';
import type { Response } from 'express';

/** The module-level limit of every named throttler: a route that does not name it in its @Throttle is not counted under it. */
const UNDECLARED = -1;

/**
 * The named throttlers (@nestjs/throttler 6). Routes opt in with `@Throttle({ <name>: { limit, ttl } })`,
 * optionally with their own `getTracker` (what is counted: the client address by default) and
 * `generateKey` (by default one counter per route):
 * - `default`: the route's own limit;
 * - `per-tenant`: a second limit beside it, counted per (client address, organization or partner)
 *   by routes that share one budget (the SSO login starts).
 */
export const THROTTLERS: ThrottlerOptions[] = [
  { name: 'default', ttl: 60_000, limit: UNDECLARED },
  { name: 'per-tenant', ttl: 60_000, limit: UNDECLARED },
];

/**
 * Rate limits only what a route declares. Counters live in Redis when REDIS_URL is set, so every
 * instance shares them; a refusal is 429 `rate_limited` with `Retry-After` (the all-exceptions filter).
 */
@Injectable()
export class AppThrottlerGuard extends ThrottlerGuard {
  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    if (props.limit === UNDECLARED) return true;
    return super.handleRequest(props);
  }

  /** Throttler 6 names the header of a named throttler `Retry-After-<name>`; clients read the standard one. */
  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(detail.timeToBlockExpire));
    return super.throwThrottlingException(context, detail);
  }
}
