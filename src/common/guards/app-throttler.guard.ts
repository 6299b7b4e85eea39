import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import type { Request } from 'express';
import { RATE_KEY } from '../decorators/rate-key.decorator';

/**
 * Rate limits only the routes that declare @Throttle, counted per client IP or per the route's
 * @RateKey. Counters live in Redis when REDIS_URL is set, so every instance shares them.
 */
@Injectable()
export class AppThrottlerGuard extends ThrottlerGuard {
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    const handler = context.getHandler();
    return !this.throttlers.some((t) => Reflect.hasMetadata(`THROTTLER:LIMIT${t.name}`, handler));
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const keyOf = this.reflector.get<((req: Request) => string) | undefined>(RATE_KEY, props.context.getHandler());
    if (!keyOf) return super.handleRequest(props);
    return super.handleRequest({ ...props, getTracker: async (req) => keyOf(req as Request) });
  }
}
