import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, lastValueFrom, Observable } from 'rxjs';
import { RequestContext } from '../../infra/context/request-context';
import { DbService, prepared } from '../../infra/database/db.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { NO_REQUEST_TRANSACTION } from '../decorators/no-request-transaction.decorator';
import { ONE_STATEMENT } from '../decorators/one-statement.decorator';
import { AppException } from '../errors/app.exception';
import { ANONYMOUS, Principal, scopeOf } from '../principal';
import type { AuthedRequest } from '../guards/auth.guard';

export const PRINCIPAL_KEY = 'principal';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The caller's session or API key, locked FOR SHARE while checked still live (migration
 * 1763700971000): a write never commits after a revocation of its credential has committed.
 */
const CREDENTIAL_LIVE = prepared('credential_live', `SELECT app_credential_live($1, $2) AS live`);

/**
 * Runs each handler in one transaction whose row-level-security settings are the caller's
 * tenants, or, for a handler marked @OneStatement, its one statement alone with those settings.
 * Routes marked @NoRequestTransaction (outbound network calls, audited refusals) open their own;
 * the principal is still put in the request context for them.
 */
@Injectable()
export class TenantContextInterceptor implements NestInterceptor {
  constructor(
    private readonly tx: TenantTransactionService,
    private readonly cls: RequestContext,
    private readonly db: DbService,
    private readonly reflector: Reflector,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const principal: Principal = req.principal ?? ANONYMOUS;
    if (this.cls.isActive()) this.cls.set(PRINCIPAL_KEY, principal);
    if (this.reflector.getAllAndOverride<boolean | undefined>(NO_REQUEST_TRANSACTION, [ctx.getHandler(), ctx.getClass()])) return next.handle();
    const checkCredential = WRITE_METHODS.has(req.method) && (!!principal.sessionId || !!principal.apiKeyId);
    if (!checkCredential && this.reflector.get<boolean | undefined>(ONE_STATEMENT, ctx.getHandler())) {
      return from(this.tx.runOneStatement(scopeOf(principal), () => lastValueFrom(next.handle(), { defaultValue: undefined })));
    }
    return from(
      this.tx.run(scopeOf(principal), async () => {
        if (checkCredential) await this.requireLiveCredential(principal);
        return lastValueFrom(next.handle(), { defaultValue: undefined });
      }),
    );
  }

  /**
   * The caller was authenticated before this transaction (and may come from the principal cache):
   * a session or key revoked since (deprovisioning, logout) must not get a write committed after
   * the revocation. Reads are not checked: they change nothing.
   */
  private async requireLiveCredential(principal: Principal): Promise<void> {
    const row = await this.db.one<{ live: boolean }>(CREDENTIAL_LIVE, [principal.sessionId ?? null, principal.apiKeyId ?? null]);
    if (!row?.live) throw AppException.unauthenticated('The session or API key has been revoked');
  }
}
