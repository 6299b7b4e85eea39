import { applyDecorators, ExecutionContext, Get } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Request } from 'express';
import { ApiErrors, ApiRedirect } from '../../../common/decorators/api-errors.decorator';
import { Public } from '../../../common/decorators/auth.decorator';
import { REDIRECT_QUERY } from '../login/sso-login.dto';

const FIVE_MINUTES = 5 * 60_000;

const tenantTracker = (req: Request) => `${req.ip}:${String(req.params.orgId ?? req.params.partnerId ?? '').toLowerCase()}`;

/**
 * The limits of every SSO login start, OIDC and SAML (docs/api-conventions.md): 30 per 5 minutes
 * per client address on each route, and 10 per 5 minutes per (client address, organization or
 * partner) across all of them, one budget whichever protocol or route starts the sign-in.
 */
export const LOGIN_START_LIMITS: Parameters<typeof Throttle>[0] = {
  default: { limit: 30, ttl: FIVE_MINUTES },
  'per-tenant': {
    limit: 10,
    ttl: FIVE_MINUTES,
    getTracker: (req) => tenantTracker(req as Request),
    generateKey: (_context: ExecutionContext, tracker: string) => `sso-login-start:${tracker}`,
  },
};

/** A public GET that starts an SSO sign-in at `path`: rate limited, answered with a redirect to the IdP. */
export const LoginStart = (path: string, redirectsTo: string) =>
  applyDecorators(
    Get(path),
    Public(),
    Throttle(LOGIN_START_LIMITS),
    ApiRedirect(redirectsTo),
    ApiQuery(REDIRECT_QUERY),
    ApiErrors({ 400: ['sso_protocol_unsupported', 'invalid_provider_configuration'] }),
  );
