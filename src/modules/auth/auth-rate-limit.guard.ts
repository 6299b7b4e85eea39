import { applyDecorators, CanActivate, ExecutionContext, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerStorage, ThrottlerException, ThrottlerStorage } from '@nestjs/throttler';
import type { Response } from 'express';
import type { AuthedRequest } from '../../common/guards/auth.guard';

export interface AuthRateLimit {
  /** Names the counter; limits with the same name share one budget across routes. */
  name: string;
  limit: number;
  ttlMs: number;
  /** What is counted: the client address, the account… */
  key: (req: AuthedRequest) => string | null | undefined;
}

const AUTH_RATE_LIMITS = 'auth:rate-limits';

/** 30 password sign-ins per minute per client address, whatever the emails (password spraying). */
export const LOGIN_PER_ADDRESS: AuthRateLimit = { name: 'login-address', limit: 30, ttlMs: 60_000, key: (req) => req.ip };

/**
 * 5 checks of the current password per account per 15 minutes, shared by change-password and
 * MFA enrolment, so a stolen access token cannot guess the password by alternating routes.
 */
export const PASSWORD_CHECK_PER_ACCOUNT: AuthRateLimit = { name: 'password-check-account', limit: 5, ttlMs: 15 * 60_000, key: (req) => req.principal?.userId };

/** 10 MFA activation codes per account per 15 minutes. */
export const MFA_ACTIVATE_PER_ACCOUNT: AuthRateLimit = { name: 'mfa-activate-account', limit: 10, ttlMs: 15 * 60_000, key: (req) => req.principal?.userId };

/**
 * Limits beside a route's @Throttle: the shared 'default' throttler counts one key per route,
 * so these count in the same storage (Redis when REDIS_URL is set) under keys of their own. A
 * route guard, so it runs after the AuthGuard and can count per account.
 */
export const AuthRateLimits = (...limits: AuthRateLimit[]) => applyDecorators(SetMetadata(AUTH_RATE_LIMITS, limits), UseGuards(AuthRateLimitGuard));

@Injectable()
export class AuthRateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const limits = this.reflector.get<AuthRateLimit[] | undefined>(AUTH_RATE_LIMITS, context.getHandler()) ?? [];
    const req = context.switchToHttp().getRequest<AuthedRequest>();
    for (const { name, limit, ttlMs, key } of limits) {
      const counted = key(req);
      if (!counted) continue;
      const record = await this.storage.increment(`${name}:${counted}`, ttlMs, limit, ttlMs, name);
      if (record.isBlocked) {
        context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(record.timeToBlockExpire));
        throw new ThrottlerException();
      }
    }
    return true;
  }
}
