import { Injectable, Logger } from '@nestjs/common';
import { RequestContext } from '../context/request-context';
import { CURRENT_TX, DbService, type Tx, type TxMode } from './db.service';
import { NO_SCOPE, SYSTEM_SCOPE, TenantScope } from './tenant-scope';

/**
 * Opens the transactions that every repository runs in, and sets the transaction-local
 * row-level-security settings on them. Settings are `set_config(..., true)`, so they vanish at
 * COMMIT and the design works behind PgBouncer in transaction mode.
 *
 * A transaction is opened lazily (db.service.ts, Tx): BEGIN and the settings travel with its
 * first statement, so a request costs one round trip to open, one per further statement and one
 * to commit; a request that runs no statement takes no connection.
 */
@Injectable()
export class TenantTransactionService {
  /** Names the savepoints of within(); unique per instance, so never reused while one is open. */
  private savepoints = 0;
  /** How often each stated reason entered system context, or crossed the caller's sites, on this instance (systemContextCounts). */
  private readonly reasons = new Map<string, number>();
  private readonly logger = new Logger('SystemContext');

  constructor(
    private readonly cls: RequestContext,
    private readonly db: DbService,
  ) {}

  /** Runs fn in a new transaction scoped to `scope` (joins the current one if already inside). */
  async run<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    return this.enter(scope, 'transaction', fn);
  }

  /**
   * The one named path that sees across tenants: public login routes, agent token lookup and
   * background jobs. Inside a request it re-scopes the request's own transaction and restores
   * the previous scope afterwards; it never opens a second connection that commits on its own.
   * Every caller states why it needs it.
   */
  async withSystemContext<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    this.note(reason);
    return this.run(this.systemScope(), fn);
  }

  /** System scope, keeping the person the current request acts for (the person-change guard still asks about them). */
  private systemScope(): TenantScope {
    const actorId = this.db.currentTx()?.scope.actorId ?? null;
    return actorId ? { ...SYSTEM_SCOPE, actorId } : SYSTEM_SCOPE;
  }

  /**
   * withSystemContext for lookups whose statements need no common snapshot or atomicity (the
   * resolution of a request's caller): outside a transaction, each statement runs as its own
   * implicit transaction in one message with the settings, so a one-statement lookup costs one
   * round trip and no COMMIT. Inside a transaction it joins it, as withSystemContext does.
   */
  async withSystemLookup<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    this.note(reason);
    return this.enter(this.systemScope(), 'each-statement', fn);
  }

  /**
   * Runs fn, whose whole work is one statement, as that statement alone: one message with the
   * settings, its own implicit transaction, no BEGIN and no COMMIT (the routes marked
   * @OneStatement). A second statement fails instead of running outside the first one's
   * transaction. Inside a transaction it joins it, as run does.
   */
  async runOneStatement<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    return this.enter(scope, 'one-statement', fn);
  }

  /** Joins the current transaction under `scope` (within), or opens a new one in `mode` around fn. */
  private enter<T>(scope: TenantScope, mode: TxMode, fn: () => Promise<T>): Promise<T> {
    const current = this.db.currentTx();
    return current ? this.within(current, scope, fn) : this.open(this.db.newTx(scope, mode), fn);
  }

  /**
   * Runs fn under the current scope without its site restriction. Only for the lookup that tells a
   * site-restricted caller that what they address exists in their organization but on another
   * site, so that the write is refused with a clear 403 rather than a 404; the database hides
   * other sites' rows from everything else (migration 1763700950000). Outside a transaction, fn
   * runs as it is.
   */
  async withAllSites<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    const tx = this.db.currentTx();
    if (!tx || !tx.scope.siteIds) return fn();
    this.note(reason);
    return this.within(tx, { ...tx.scope, siteIds: null }, fn);
  }

  /** Each reason that entered system context or crossed the caller's sites on this instance, with how often: what crosses, and why. */
  systemContextCounts(): Record<string, number> {
    return Object.fromEntries(this.reasons);
  }

  private note(reason: string): void {
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    this.logger.debug(`system context: ${reason}`);
  }

  /** Replaces the scope of the current transaction (e.g. after creating an organization). */
  async rescope(scope: TenantScope): Promise<void> {
    const tx = this.db.currentTx();
    if (tx) tx.scope = scope;
  }

  /** Whether the current request or job is inside a transaction (or a statement-wise context). */
  inTransaction(): boolean {
    return this.db.currentTx() !== null;
  }

  currentScope(): TenantScope {
    return this.db.currentTx()?.scope ?? NO_SCOPE;
  }

  private open<T>(tx: Tx, fn: () => Promise<T>): Promise<T> {
    return this.cls.run('inherit', async () => {
      this.cls.set(CURRENT_TX, tx);
      let result: T;
      try {
        result = await fn();
      } catch (e) {
        await tx.end(false).catch(() => undefined);
        throw e;
      }
      await tx.end(true);
      return result;
    });
  }

  /**
   * Runs fn under `scope` inside the current transaction, in a savepoint, so that a statement
   * fn gets refused cannot take the rest of the transaction down with it: on failure the work of
   * fn is rolled back to the savepoint (which also reverts the settings), the previous scope is
   * in force again and fn's own error is rethrown (restoring the scope in the aborted transaction
   * would fail instead and hide it: 25P02). On success fn's work is kept.
   * The savepoint, the switch and their undoing are queued (Tx.pending) and ride on the next
   * statement: a fn that runs no statement costs nothing, and one that does costs no extra round
   * trip on success. Each savepoint has its own name, so two interleaved calls on one
   * transaction fail loudly instead of releasing or rolling back each other's work.
   */
  private async within<T>(tx: Tx, scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    const previous = tx.scope;
    if (tx.eachStatement) {
      // Nothing to roll back: every statement of this context committed on its own.
      tx.scope = scope;
      try {
        return await fn();
      } finally {
        tx.scope = previous;
      }
    }
    const savepoint = `tenant_scope_${++this.savepoints}`;
    const mark = `SAVEPOINT ${savepoint}`;
    tx.pending.push(mark);
    tx.scope = scope;
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      await this.undo(tx, mark, savepoint, previous);
      throw e;
    }
    const unsent = tx.pending.indexOf(mark);
    if (unsent !== -1) tx.pending.splice(unsent);
    else tx.pending.push(`RELEASE SAVEPOINT ${savepoint}`);
    tx.scope = previous;
    return result;
  }

  /**
   * After fn failed: back to the savepoint (which also reverts the settings, so the next
   * statement sets the previous scope again). If the savepoint was never sent, fn ran no
   * statement and there is nothing to undo. If even the rollback fails (the connection is gone),
   * the transaction is unusable, so no statement can run under the inner scope; fn's error is
   * still the one the caller sees.
   */
  private async undo(tx: Tx, mark: string, savepoint: string, previous: TenantScope): Promise<void> {
    tx.scope = previous;
    const unsent = tx.pending.indexOf(mark);
    if (unsent !== -1) {
      tx.pending.splice(unsent);
      return;
    }
    // Everything still queued belongs to calls nested inside fn, undone with it.
    tx.pending = [];
    tx.applied = null;
    await tx.send([`ROLLBACK TO SAVEPOINT ${savepoint}`, `RELEASE SAVEPOINT ${savepoint}`]).catch(() => undefined);
  }
}
