import { Client } from 'pg';
import { stopEmbedded } from './global-setup';

/** Drops the run's database, then stops the embedded PostgreSQL (if the run started one) and removes its directory. */
export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  const ownerUrl = g.__TEST_DATABASE_URL__ as string | undefined;
  try {
    if (ownerUrl) {
      const url = new URL(ownerUrl);
      const name = url.pathname.slice(1);
      url.pathname = '/postgres';
      const client = new Client({ connectionString: url.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    }
  } finally {
    await stopEmbedded(g);
  }
}
