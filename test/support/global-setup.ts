import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres } from '../../src/infra/database/embedded-postgres';
import { ensureDatabase, migrate } from '../../src/infra/database/migrate';

/**
 * One database per test run, uniquely named, on DATABASE_URL's server or on an embedded
 * PostgreSQL started for the run; migrated once, dropped by the teardown.
 */
export default async function globalSetup(): Promise<void> {
  let base = process.env.DATABASE_URL;
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), 'rmm-test-pg-'));
    const embedded = await startEmbeddedPostgres({ dataDir: dir, persistent: false });
    (globalThis as Record<string, unknown>).__EMBEDDED_PG__ = embedded;
    base = embedded.url;
    console.log(`\n[test] DATABASE_URL is not set: using embedded PostgreSQL in ${dir}`);
  }
  const url = new URL(base);
  url.pathname = `/rmm_test_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const ownerUrl = url.toString();
  await ensureDatabase(ownerUrl);
  const appUrl = await migrate(ownerUrl);
  process.env.TEST_DATABASE_URL = ownerUrl;
  process.env.TEST_DATABASE_APP_URL = appUrl;
  (globalThis as Record<string, unknown>).__TEST_DATABASE_URL__ = ownerUrl;
}
