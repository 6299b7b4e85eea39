import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DbService } from './db.service';

/**
 * Tables whose row-level-security policies every agent request plans: reading them once (no row)
 * loads their definitions and policies into a new server connection's caches.
 */
const WARM_TABLES = `SELECT 1 FROM agents a, devices d, elevation_requests e, pam_rules r, audit_logs l WHERE false`;

/**
 * Opens `DATABASE_POOL_WARM` connections of the request role's pool before the instance listens
 * (Nest runs this before app.listen), each with one statement over the hot tables, and keeps them
 * open while idle (the pool's `min`). Without it the pool grows under the first load: every new
 * server connection costs a TCP and SCRAM handshake, a server process and cold catalog caches,
 * and the first seconds after a start (or after a quiet spell let idle connections close) were
 * seconds, not milliseconds. A failure here is logged, not fatal: the pool still opens on demand.
 */
@Injectable()
export class PoolWarmer implements OnApplicationBootstrap {
  private readonly logger = new Logger('Database');

  constructor(
    private readonly db: DbService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const count = this.config.databasePoolWarm;
    if (count <= 0) return;
    const pool = this.db.pool();
    const started = Date.now();
    const clients: PoolClient[] = [];
    try {
      const opened = await Promise.allSettled(Array.from({ length: count }, () => pool.connect()));
      for (const o of opened) if (o.status === 'fulfilled') clients.push(o.value);
      await Promise.all(clients.map((c) => c.query(WARM_TABLES)));
      this.logger.log(`${clients.length} of ${count} request-role connections open and warm in ${Date.now() - started} ms`);
    } catch (err) {
      this.logger.warn(`Warming the pool failed (${(err as Error).message}); connections open on demand`);
    } finally {
      clients.forEach((c) => c.release());
    }
  }
}
