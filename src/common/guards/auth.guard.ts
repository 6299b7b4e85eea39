import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AUTH_META, AuthMeta } from '../decorators/auth.decorator';
import { AppException } from '../errors/app.exception';
import { ANONYMOUS, canAccessSite, hasPermission, Principal } from '../principal';
import { PrincipalSource } from '../principal-source';
import { AgentPresenceSink } from '../agent-presence-sink';

export type AuthedRequest = Request & { principal: Principal; authMeta: AuthMeta };

function bearerOf(req: Request): string | null {
  const header = req.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : null;
}

function siteIdInputs(req: Request): unknown[] {
  const body = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
  return [req.query?.siteId, body.siteId, req.params?.siteId].filter((v) => v !== undefined && v !== null);
}

/**
 * Global guard: every route states who may call it with @Auth, @Public or @AgentAuth; a route
 * with none is denied. It resolves the principal (in system context, before any tenant
 * transaction exists) and checks permission, MFA, partner scope and explicit site inputs. An
 * accepted agent is reported to AgentPresenceSink, which keeps agents.last_seen_at.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly resolver: PrincipalSource,
    private readonly presence: AgentPresenceSink,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const meta = this.reflector.getAllAndOverride<AuthMeta | undefined>(AUTH_META, [ctx.getHandler(), ctx.getClass()]);
    if (!meta) throw AppException.forbidden('forbidden', 'This route is not available');
    req.authMeta = meta;
    if (meta.kind === 'public') {
      req.principal = ANONYMOUS;
      return true;
    }
    const bearer = bearerOf(req);
    if (!bearer) throw AppException.unauthenticated();
    if (meta.kind === 'agent') {
      const principal = await this.resolver.fromAgentToken(bearer);
      // A token used on another agent's path is as good as no token.
      if (!principal || principal.agent?.agentId !== req.params.id) throw AppException.unauthenticated('Invalid agent credentials');
      req.principal = principal;
      // Every accepted agent request, cached principal or not (ingest, polls, settings): noted in memory, written coalesced.
      this.presence.seen(principal.agent.agentId, principal.agent.orgId);
      return true;
    }
    if (meta.kind === 'scim') {
      const principal = await this.resolver.fromScimToken(bearer);
      if (!principal) throw AppException.unauthenticated('Invalid or revoked SCIM token');
      req.principal = principal;
      return true;
    }
    const principal = await this.resolver.fromBearer(bearer);
    if (!principal) throw AppException.unauthenticated('Invalid or expired credentials');
    req.principal = principal;
    const required = meta.permission === undefined ? [] : Array.isArray(meta.permission) ? meta.permission : [meta.permission];
    const missing = required.find((p) => !hasPermission(principal.permissions, p));
    if (missing) throw AppException.forbidden('forbidden', `Missing permission ${missing}`, { permission: missing });
    if (meta.partnerScope && principal.scope !== 'partner') {
      throw AppException.forbidden('partner_scope_required', 'This route needs a partner-scope session');
    }
    if (meta.mfa && !principal.mfa) throw AppException.forbidden('mfa_required', 'Multi-factor authentication is required for this action');
    if (meta.siteScope) {
      for (const siteId of siteIdInputs(req)) {
        if (typeof siteId === 'string' && !canAccessSite(principal, siteId)) {
          throw AppException.forbidden('site_access_denied', 'You do not have access to this site');
        }
      }
    }
    return true;
  }
}
