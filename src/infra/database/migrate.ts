import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { developmentAppRolePassword } from '../config/app-config';
import { StartFailure } from '../startup/start-failure';
import { createOwnerDataSource } from './data-source';
import { ensureAppRoleLogin } from './app-role';

export async function ensureDatabase(ownerUrl: string): Promise<void> {
  const url = new URL(ownerUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(ownerUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * Applies pending migrations as the owner and returns the request-role URL: appUrl when given,
 * else one derived with the development password kept under dataDir (default DATA_DIR).
 */
export async function migrate(ownerUrl: string, appUrl?: string, dataDir?: string): Promise<string> {
  const ds = createOwnerDataSource(ownerUrl);
  await ds.initialize();
  try {
    // Serialise concurrent starts of several instances on one database (session lock on one connection).
    const lock = ds.createQueryRunner();
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock(7242001)');
      const { unknown, pending } = await migrationState(ds);
      if (unknown.length) throw migrationsAhead(unknown);
      await ds.runMigrations().catch((err: unknown) => {
        throw new StartFailure(`applying ${pending.length} pending migration(s) failed, and none of them was kept (they run in one transaction)`, [
          ['setting', 'DATABASE_URL: its role runs the migrations and owns the tables'],
          ['migrations', pending.length > 2 ? `${pending[0]} … ${pending[pending.length - 1]}` : pending.join(', ')],
          ['cause', err instanceof Error ? err.message : String(err)],
          ['to do', "the cause names the object: a database that another application already uses needs a database of this service's own; a role missing a privilege needs it granted (docs/operations.md)"],
        ], err);
      });
    } finally {
      await lock.query('SELECT pg_advisory_unlock(7242001)');
      await lock.release();
    }
  } finally {
    await ds.destroy();
  }
  return appUrl ?? ensureAppRoleLogin(ownerUrl, developmentAppRolePassword(dataDir));
}

/** Migrations the database records but this build does not know (`unknown`), and those of this build not yet applied (`pending`). */
export async function migrationState(ds: DataSource): Promise<{ unknown: string[]; pending: string[] }> {
  const known = ds.migrations.map((m) => m.name ?? m.constructor.name);
  const table = ds.options.migrationsTableName ?? 'migrations';
  const [{ present }] = (await ds.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [table])) as { present: boolean }[];
  const applied = present ? ((await ds.query(`SELECT name FROM ${table} ORDER BY id`)) as { name: string }[]).map((r) => r.name) : [];
  return { unknown: applied.filter((n) => !known.includes(n)), pending: known.filter((n) => !applied.includes(n)) };
}

/**
 * The database was migrated by a later version of the service: this build would serve a schema
 * it was not written for (columns it does not fill, rules it does not know), so it does not start.
 */
export function migrationsAhead(unknown: string[]): StartFailure {
  return new StartFailure('the database was migrated by a newer version of the service', [
    ['setting', 'DATABASE_URL (its migrations table)'],
    ['unknown migrations', unknown.length > 3 ? `${unknown.slice(0, 3).join(', ')} and ${unknown.length - 3} more` : unknown.join(', ')],
    ['to do', 'start the version that applied them (or a later one); to go back to this version, restore the database from a backup taken before the upgrade'],
  ]);
}
