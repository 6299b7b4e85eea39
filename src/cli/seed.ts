import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createApp, prepareDatabase } from '../bootstrap';
import { loadConfig } from '../infra/config/app-config';
import { SeedService } from '../seed/seed.service';
import type { Fixture } from '../seed/fixture.types';

/** `npm run seed -- file.json`: loads a fixture and prints the key → id map as the last line. */
async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: npm run seed -- <fixture.json>');
  const fixture = JSON.parse(readFileSync(resolve(file), 'utf8')) as Fixture;
  const config = loadConfig();
  const db = await prepareDatabase(config);
  const app = await createApp({ ...config, databaseUrl: db.ownerUrl }, db.appUrl, { logs: false });
  try {
    const ids = await app.get(SeedService).load(fixture);
    process.stdout.write(JSON.stringify(ids) + '\n');
  } finally {
    await app.close();
    await db.embedded?.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
