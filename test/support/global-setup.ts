import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/infra/database/embedded-postgres';
import { ensureDatabase, migrate } from '../../src/infra/database/migrate';

/**
 * One database per test run, uniquely named, on DATABASE_URL's server or on an embedded
 * PostgreSQL started for the run; migrated once, dropped by the teardown. The embedded server
 * and its directory are the teardown's too (test/support/global-teardown.ts), or this setup's
 * when it fails before the run starts (jest runs no teardown then).
 */
export default async function globalSetup(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  let base = process.env.DATABASE_URL;
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), 'rmm-test-pg-'));
    g.__EMBEDDED_PG_DIR__ = dir;
    try {
      const embedded = await startEmbeddedPostgres({ dataDir: dir, persistent: false });
      g.__EMBEDDED_PG__ = embedded;
      base = embedded.url;
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    console.log(`\n[test] DATABASE_URL is not set: using embedded PostgreSQL in ${dir}`);
  }
  try {
    const url = new URL(base);
    url.pathname = `/rmm_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
    const ownerUrl = url.toString();
    await ensureDatabase(ownerUrl);
    g.__TEST_DATABASE_URL__ = ownerUrl;
    const appUrl = await migrate(ownerUrl);
    process.env.TEST_DATABASE_URL = ownerUrl;
    process.env.TEST_DATABASE_APP_URL = appUrl;
  } catch (err) {
    await stopEmbedded(g);
    throw err;
  }
}

/** Stops the run's embedded PostgreSQL, if any, and removes its whole directory (data and credentials). */
export async function stopEmbedded(g: Record<string, unknown>): Promise<void> {
  const dir = g.__EMBEDDED_PG_DIR__ as string | undefined;
  try {
    await (g.__EMBEDDED_PG__ as EmbeddedDatabase | undefined)?.stop();
  } finally {
    g.__EMBEDDED_PG__ = undefined;
    g.__EMBEDDED_PG_DIR__ = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
