import { execFileSync } from 'node:child_process';
import { PGBOUNCER_PATH } from '../support/pgbouncer';
import { POOLED_SERVER_CONNECTIONS } from '../support/pgbouncer.environment';
import { Client } from 'pg';
import { pgbouncer } from './scale-out.kit';

/**
 * What the tier runs against, printed with the run and checked as the running PgBouncer reports
 * it (SHOW CONFIG), so that docs/scaling.md states the version and settings that were tested.
 */
describe('the PgBouncer the scale-out tier runs through', () => {
  it('is the installed pgbouncer, whose version is printed with the run', () => {
    const printed = execFileSync(PGBOUNCER_PATH, ['--version'], { encoding: 'utf8' }).trim();
    console.info(`[scale-out tier] ${PGBOUNCER_PATH} --version:\n${printed}`);
    expect(printed).toContain(`PgBouncer ${pgbouncer().version}`);
  });

  it('pools by transaction, with fewer server connections than one instance has clients, and resets nothing between clients', async () => {
    const config = Object.fromEntries((await pgbouncer().show<{ key: string; value: string }>('CONFIG')).map((r) => [r.key, r.value]));
    expect(config).toMatchObject({
      pool_mode: 'transaction',
      default_pool_size: String(POOLED_SERVER_CONNECTIONS),
      max_db_connections: String(POOLED_SERVER_CONNECTIONS),
      min_pool_size: '0',
      reserve_pool_size: '0',
      server_reset_query: '',
      auth_type: 'scram-sha-256',
    });
    // Each instance's pool (DATABASE_POOL_SIZE, 20 by default) outnumbers the server connections.
    expect(POOLED_SERVER_CONNECTIONS).toBeLessThan(20);
    // No prepared-statement tracking before 1.21: the tier proves the service needs none.
    const [major, minor] = pgbouncer().version.split('.').map(Number);
    const tracking = major > 1 || minor >= 21;
    expect(tracking ? Number(config.max_prepared_statements ?? 0) : 0).toBe(0);
    // The request role reaches PostgreSQL through it.
    const client = new Client({ connectionString: pgbouncer().appUrl });
    await client.connect();
    const pg = await client.query<{ server_version: string }>('SHOW server_version').then((r) => r.rows[0].server_version, (err) => err as Error).finally(() => client.end());
    expect(pg).toEqual(expect.any(String));
    console.info(`[scale-out tier] PgBouncer ${pgbouncer().version} (pool_mode ${config.pool_mode}, default_pool_size ${config.default_pool_size}) in front of PostgreSQL ${pg}`);
  });
});
