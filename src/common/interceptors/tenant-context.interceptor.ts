import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { from, lastValueFrom, Observable } from 'rxjs';
import { ClsService } from 'nestjs-cls';
import { TenantTransaction } from '../../infra/database/tenant-transaction.service';
import { ANONYMOUS, Principal, scopeOf } from '../principal';
import type { AuthedRequest } from '../guards/auth.guard';

export const PRINCIPAL_KEY = 'principal';

/**
 * Runs each handler in one transaction whose row-level-security settings are the caller's
 * tenants. Routes marked transaction 'none' (outbound network calls) open their own.
 */
@Injectable()
export class TenantContextInterceptor implements NestInterceptor {
  constructor(
    private readonly tx: TenantTransaction,
    private readonly cls: ClsService,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const principal: Principal = req.principal ?? ANONYMOUS;
    if (this.cls.isActive()) this.cls.set(PRINCIPAL_KEY, principal);
    if (req.authMeta?.transaction === 'none') return next.handle();
    return from(this.tx.run(scopeOf(principal), () => lastValueFrom(next.handle(), { defaultValue: undefined })));
  }
}
