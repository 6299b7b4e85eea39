import { Injectable } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Db } from './db.service';
import { APPLY_SCOPE_SQL, NO_SCOPE, SYSTEM_SCOPE, TenantScope, scopeParams } from './tenant-scope';

const SCOPE_KEY = 'tenantScope';

/**
 * Opens the transactions that every repository runs in, and sets the transaction-local
 * row-level-security settings on them. Settings are `set_config(..., true)`, so they vanish at
 * COMMIT and the design works behind PgBouncer in transaction mode.
 */
@Injectable()
export class TenantTransaction {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly cls: ClsService,
    private readonly db: Db,
  ) {}

  /** Runs fn in a new transaction scoped to `scope` (joins the current one if already inside). */
  async run<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    if (this.txHost.isTransactionActive()) return this.within(scope, fn);
    return this.cls.run({ ifNested: 'inherit' }, () =>
      this.txHost.withTransaction(async () => {
        await this.apply(scope);
        return fn();
      }),
    );
  }

  /**
   * The one named path that sees across tenants: public login routes, agent token lookup and
   * background jobs. Inside a request it re-scopes the request's own transaction and restores
   * the previous scope afterwards; it never opens a second connection that commits on its own.
   * Every caller states why it needs it.
   */
  async withSystemContext<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    void reason;
    return this.run(SYSTEM_SCOPE, fn);
  }

  /** Replaces the scope of the current transaction (e.g. after creating an organization). */
  async rescope(scope: TenantScope): Promise<void> {
    await this.apply(scope);
  }

  currentScope(): TenantScope {
    return (this.cls.isActive() && this.cls.get<TenantScope>(SCOPE_KEY)) || NO_SCOPE;
  }

  private async within<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    const previous = this.currentScope();
    await this.apply(scope);
    try {
      return await fn();
    } finally {
      await this.apply(previous);
    }
  }

  private async apply(scope: TenantScope): Promise<void> {
    await this.db.exec(APPLY_SCOPE_SQL, scopeParams(scope));
    if (this.cls.isActive()) this.cls.set(SCOPE_KEY, scope);
  }
}
