import { Client } from 'pg';
import type { EmbeddedDatabase } from '../../src/infra/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  const ownerUrl = g.__TEST_DATABASE_URL__ as string | undefined;
  if (ownerUrl) {
    const url = new URL(ownerUrl);
    const name = url.pathname.slice(1);
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
    await client.end();
  }
  await (g.__EMBEDDED_PG__ as EmbeddedDatabase | undefined)?.stop();
}
