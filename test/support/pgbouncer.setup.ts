/**
 * setupFilesAfterEnv of the pooled tiers (after env.ts): the request role's URL goes through
 * the file's PgBouncer, and when the file is done the pooler's server connections must carry
 * no session state (see expectCleanServerConnections). Where PgBouncer cannot be had (no apt),
 * every test of the file is skipped with the reason.
 */
import type { PooledRun } from './pgbouncer.environment';
import { expectCleanServerConnections } from './pgbouncer-hygiene';

const run = (globalThis as { __PGBOUNCER__?: PooledRun }).__PGBOUNCER__;
if (!run) throw new Error('pgbouncer.setup.ts needs testEnvironment test/support/pgbouncer.environment.ts');

if (!run.ok) {
  console.warn(`[pgbouncer tier] skipped: ${run.reason}`);
  const g = globalThis as unknown as Record<string, unknown>;
  const skip = <T extends { skip: unknown }>(fn: T) => Object.assign(fn.skip as object, { skip: fn.skip, only: fn.skip, each: (fn.skip as { each: unknown }).each });
  g.describe = skip(describe);
  g.it = skip(it);
  g.test = skip(test);
} else {
  process.env.DATABASE_APP_URL = run.bouncer.appUrl;
  // The default, and the only mode correct behind PgBouncer 1.18.
  process.env.DATABASE_PREPARED_STATEMENTS = 'false';
  afterAll(() => expectCleanServerConnections(run.bouncer), 60_000);
}
