import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerException, ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';

/** 10 login starts per 5 minutes per (client address, organization or partner) (docs/api-conventions.md). */
export const LOGIN_START_PER_TENANT = { limit: 10, ttl: 5 * 60_000 } as const;

/**
 * The second limit of the login start routes, next to the per-IP @Throttle: one route can only
 * carry one limit of the shared 'default' throttler, so this one counts in the same storage
 * (Redis when REDIS_URL is set) under its own key.
 */
@Injectable()
export class LoginStartRateGuard implements CanActivate {
  constructor(@InjectThrottlerStorage() private readonly storage: ThrottlerStorage) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const tenant = String(req.params.orgId ?? req.params.partnerId ?? '').toLowerCase();
    const key = `sso-login-start:${req.ip}:${tenant}`;
    const { limit, ttl } = LOGIN_START_PER_TENANT;
    const record = await this.storage.increment(key, ttl, limit, ttl, 'sso-login-start');
    if (record.isBlocked) {
      context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(record.timeToBlockExpire));
      throw new ThrottlerException();
    }
    return true;
  }
}
