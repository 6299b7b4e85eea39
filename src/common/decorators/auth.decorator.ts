import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiParam, ApiSecurity } from '@nestjs/swagger';
import type { Principal } from '../principal';

export const AUTH_META = 'auth:meta';

export interface AuthOptions {
  /** Permission string(s) `resource:action` the caller must hold (all of them). */
  permission?: string | string[];
  /** The session must have satisfied MFA (own TOTP, or trusted IdP MFA). */
  mfa?: boolean;
  /** Only a partner-scope session may call. */
  partnerScope?: boolean;
  /** siteId inputs (query, body, params) must be inside the caller's allowed sites; services filter reads. */
  siteScope?: boolean;
}

export type AuthMeta = ({ kind: 'user' } & AuthOptions) | { kind: 'public' } | { kind: 'agent' } | { kind: 'scim' };

/**
 * The one decorator that states who may call a route. A route without one is denied. Whether the
 * handler runs in the request's transaction is a separate matter: see @NoRequestTransaction.
 */
export const Auth = (options: AuthOptions = {}) =>
  applyDecorators(SetMetadata(AUTH_META, { kind: 'user', ...options } satisfies AuthMeta), ApiBearerAuth('bearer'), ApiSecurity('apiKey'));

/** No authentication. Public routes read across tenants only through withSystemContext. */
export const Public = () => SetMetadata(AUTH_META, { kind: 'public' } satisfies AuthMeta);

/** Agent bearer token bound to the device whose agent id is the :id path parameter. */
export const AgentAuth = () =>
  applyDecorators(
    SetMetadata(AUTH_META, { kind: 'agent' } satisfies AuthMeta),
    ApiBearerAuth('agent'),
    ApiParam({ name: 'id', description: "The agent id answered at enrolment; it must be the token's agent (else 401).", schema: { type: 'string', format: 'uuid' } }),
  );

/** A SCIM connection's bearer token (`scim_…`); no other credential is accepted on these routes. */
export const ScimAuth = () => SetMetadata(AUTH_META, { kind: 'scim' } satisfies AuthMeta);

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest().principal;
});
