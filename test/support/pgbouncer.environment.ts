import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment } from 'jest-environment-node';
import { ensurePgBouncer, PgBouncer, startPgBouncer } from './pgbouncer';

/** Server connections behind the pooler: fewer than the clients (each instance's pool has 20). */
export const POOLED_SERVER_CONNECTIONS = 3;

/** What a test file of the pooled tiers finds in `globalThis.__PGBOUNCER__`. */
export type PooledRun = { ok: true; bouncer: PgBouncer; directAppUrl: string } | { ok: false; reason: string };

/**
 * The test environment of the tiers that reach PostgreSQL through PgBouncer: before a test file
 * runs, a PgBouncer of its own (transaction pooling, POOLED_SERVER_CONNECTIONS server
 * connections) in front of the run's database; after the file, after every afterAll, it stops.
 * `pgbouncer.setup.ts` points the request role's URL at it and checks the server connections
 * at the end of the file.
 */
export default class PgBouncerEnvironment extends TestEnvironment {
  private bouncer: PgBouncer | null = null;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
  }

  override async setup(): Promise<void> {
    await super.setup();
    const directAppUrl = process.env.TEST_DATABASE_APP_URL;
    if (!directAppUrl) throw new Error('TEST_DATABASE_APP_URL is not set: the global setup creates the run database first');
    const available = ensurePgBouncer();
    let run: PooledRun;
    if (!available.ok) {
      run = { ok: false, reason: available.reason };
    } else {
      this.bouncer = await startPgBouncer({ appUrl: directAppUrl, poolSize: POOLED_SERVER_CONNECTIONS });
      run = { ok: true, bouncer: this.bouncer, directAppUrl };
    }
    this.global.__PGBOUNCER__ = run;
  }

  override async teardown(): Promise<void> {
    try {
      await this.bouncer?.stop();
    } finally {
      await super.teardown();
    }
  }
}
