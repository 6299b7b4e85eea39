import { Client } from 'pg';
import type { PgBouncer } from './pgbouncer';

/** Startup parameters PgBouncer itself tracks per client and SETs on a server connection when it hands it over. */
const POOLER_TRACKED = ['application_name', 'client_encoding', 'datestyle', 'standard_conforming_strings', 'timezone'];

/** The row-level-security settings: transaction-local, so empty between transactions. */
const APP_SETTINGS = ['app.scope', 'app.org_ids', 'app.partner_ids', 'app.user_id', 'app.partner_wide'];

const STATE_SQL = `
  SELECT pg_backend_pid() AS pid,
         (SELECT count(*)::int FROM pg_prepared_statements) AS prepared_statements,
         (SELECT count(*)::int FROM pg_cursors) AS open_cursors,
         (SELECT count(*)::int FROM pg_listening_channels()) AS listen_channels,
         (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS advisory_locks,
         (SELECT count(*)::int FROM pg_class WHERE relnamespace = pg_my_temp_schema()) AS temporary_tables,
         (SELECT coalesce(array_agg(lower(name) ORDER BY name), '{}') FROM pg_settings
           WHERE source = 'session' AND lower(name) <> ALL ('{${POOLER_TRACKED.join(',')}}'::text[])) AS session_settings,
         ARRAY[${APP_SETTINGS.map((s) => `coalesce(current_setting('${s}', true), '')`).join(', ')}] AS app_settings`;

export interface ServerConnectionState {
  pid: number;
  prepared_statements: number;
  open_cursors: number;
  listen_channels: number;
  advisory_locks: number;
  /** Temporary tables (and their indexes) that outlived their transaction; ON COMMIT DROP ones are gone. */
  temporary_tables: number;
  session_settings: string[];
  app_settings: string[];
}

/** Reads the state of every server connection of the pool: as many concurrent transactions as the pool has connections. */
export async function serverConnectionStates(bouncer: PgBouncer): Promise<ServerConnectionState[]> {
  const size = Number(bouncer.settings.default_pool_size);
  const clients = Array.from({ length: size }, () => new Client({ connectionString: bouncer.appUrl }));
  try {
    await Promise.all(clients.map((c) => c.connect()));
    // Each open transaction holds its server connection, so these are `size` different ones.
    await Promise.all(clients.map((c) => c.query('BEGIN')));
    const states = await Promise.all(clients.map(async (c) => (await c.query<ServerConnectionState>(STATE_SQL)).rows[0]));
    await Promise.all(clients.map((c) => c.query('ROLLBACK')));
    return states;
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

/**
 * The assertion that no path used a session-level feature on the pooled URL: once a test file
 * is done, no server connection behind the pooler holds a prepared statement, an open cursor, a
 * LISTEN, an advisory lock, a temporary table, a session-level SET or a leftover tenant setting.
 * Such state would reach whichever client the pooler hands the connection to next. Also checks
 * that the file's transactions really went through the pooler.
 */
export async function expectCleanServerConnections(bouncer: PgBouncer): Promise<void> {
  const database = new URL(bouncer.appUrl).pathname.slice(1);
  const stats = await bouncer.show<{ database: string; total_xact_count: string }>('STATS');
  const transactions = Number(stats.find((s) => s.database === database)?.total_xact_count ?? 0);
  expect(transactions).toBeGreaterThan(0);

  const states = await serverConnectionStates(bouncer);
  expect(new Set(states.map((s) => s.pid)).size).toBe(states.length);
  const clean = (pid: number): ServerConnectionState => ({
    pid,
    prepared_statements: 0,
    open_cursors: 0,
    listen_channels: 0,
    advisory_locks: 0,
    temporary_tables: 0,
    session_settings: [],
    app_settings: APP_SETTINGS.map(() => ''),
  });
  expect(states).toEqual(states.map((s) => clean(s.pid)));
}
