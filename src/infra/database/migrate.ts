import { Client } from 'pg';
import { developmentAppRolePassword } from '../config/app-config';
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
      await ds.runMigrations();
    } finally {
      await lock.query('SELECT pg_advisory_unlock(7242001)');
      await lock.release();
    }
  } finally {
    await ds.destroy();
  }
  return appUrl ?? ensureAppRoleLogin(ownerUrl, developmentAppRolePassword(dataDir));
}
