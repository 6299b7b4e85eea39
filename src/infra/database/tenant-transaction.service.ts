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
  /** Names the savepoints of within(); unique per instance, so never reused while one is open. */
  private savepoints = 0;

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

  /**
   * Runs fn under `scope` inside the current transaction, in a savepoint, so that a statement
   * fn gets refused cannot take the rest of the transaction down with it: on failure the work of
   * fn is rolled back to the savepoint (which also reverts the settings), the previous scope is
   * set again and fn's own error is rethrown; restoring the scope in the aborted transaction would
   * fail instead and hide it (25P02). On success the savepoint is released, keeping fn's work.
   * Cost: two statements (SAVEPOINT, RELEASE) beside the two scope switches. Each savepoint has
   * its own name, so two interleaved calls on one transaction fail loudly instead of releasing or
   * rolling back each other's work.
   */
  private async within<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    const previous = this.currentScope();
    const savepoint = `tenant_scope_${++this.savepoints}`;
    await this.db.exec(`SAVEPOINT ${savepoint}`);
    let result: T;
    try {
      await this.apply(scope);
      result = await fn();
    } catch (e) {
      await this.undo(savepoint, previous);
      throw e;
    }
    try {
      await this.db.exec(`RELEASE SAVEPOINT ${savepoint}`);
      await this.apply(previous);
    } catch (e) {
      // The transaction is unusable now; the context at least names the scope it is back in.
      this.noteScope(previous);
      throw e;
    }
    return result;
  }

  /**
   * After fn failed: back to the savepoint and the previous scope. If even that fails (the
   * connection is gone), the transaction is unusable, so no statement can run under the inner
   * scope; fn's error is still the one the caller sees.
   */
  private async undo(savepoint: string, previous: TenantScope): Promise<void> {
    try {
      await this.db.exec(`ROLLBACK TO SAVEPOINT ${savepoint}`);
      await this.db.exec(`RELEASE SAVEPOINT ${savepoint}`);
      await this.apply(previous);
    } catch {
      this.noteScope(previous);
    }
  }

  /** Records the scope in the request context without a statement (the transaction has failed). */
  private noteScope(previous: TenantScope): void {
    if (this.cls.isActive()) this.cls.set(SCOPE_KEY, previous);
  }

  private async apply(scope: TenantScope): Promise<void> {
    await this.db.exec(APPLY_SCOPE_SQL, scopeParams(scope));
    if (this.cls.isActive()) this.cls.set(SCOPE_KEY, scope);
  }
}
