import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DbService } from './db.service';
import { TenantTransactionService } from './tenant-transaction.service';

/**
 * Runs the agent hot path's database functions once on the connection, undoing what they write
 * (migration 1763702600000): their plans, and the catalog and row-level-security entries of the
 * tables they touch, are then in that server connection's caches.
 */
const WARM_CONNECTION = `SELECT app_warm_connection($1) AS ran`;

/**
 * Opens `DATABASE_POOL_WARM` connections of the request role's pool before the instance listens
 * (Nest runs this before app.listen), runs the hot path's functions once on each, and keeps them
 * open while idle (the pool's `min`). Without it the pool grows under the first load: every new
 * server connection costs a TCP and SCRAM handshake, a server process, cold catalog caches and a
 * first execution of each hot function (20–30 ms each for the two ingest functions), all paid at
 * once by the first requests, and the first seconds after a start (or after a quiet spell let
 * idle connections close) were seconds, not milliseconds. Each connection is warmed in its own
 * transaction, all at once, so each holds a connection of its own. A failure here is logged, not
 * fatal: the pool still opens on demand.
 */
@Injectable()
export class PoolWarmer implements OnApplicationBootstrap {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly db: DbService,
    private readonly tenantTx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const count = this.config.databasePoolWarm;
    if (count <= 0) return;
    const started = Date.now();
    const warmed = await Promise.allSettled(Array.from({ length: count }, (_, n) => this.warmOne(n)));
    const failed = warmed.filter((w): w is PromiseRejectedResult => w.status === 'rejected');
    const ran = warmed.some((w) => w.status === 'fulfilled' && w.value > 0);
    const what = ran ? 'open and warm' : 'open (no device yet: the hot path was not run)';
    this.logger.log(`${count - failed.length} of ${count} request-role connections ${what} in ${Date.now() - started} ms`);
    if (failed.length) this.logger.warn(`Warming the pool failed (${(failed[0].reason as Error).message}); connections open on demand`);
  }

  /** One connection, in a transaction of its own, on the n-th device: how many hot functions ran on it. */
  private warmOne(n: number): Promise<number> {
    return this.tenantTx.withSystemContext('warm a new connection of the pool', async () => {
      const row = await this.db.one<{ ran: number }>(WARM_CONNECTION, [n]);
      return row?.ran ?? 0;
    });
  }
}
