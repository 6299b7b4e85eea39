import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp, prepareDatabase } from './bootstrap';
import { loadConfig } from './infra/config/app-config';
import { statementMode } from './infra/database/db.service';
import { SeedService } from './infra/database/seed/seed.service';
import type { Fixture } from './infra/database/seed/fixture.types';

async function main(): Promise<void> {
  const config = loadConfig();
  const db = await prepareDatabase(config);
  const app = await createApp({ ...config, databaseUrl: db.ownerUrl }, db.appUrl);
  const demo = !config.isProduction;
  if (demo) {
    const fixture = JSON.parse(readFileSync(join(__dirname, 'infra/database/seed/demo.json'), 'utf8')) as Fixture;
    await app.get(SeedService).load(fixture);
  }
  await app.listen(config.port);
  const base = `http://localhost:${config.port}`;
  const lines = [
    '',
    `  Service:  ${base}/api/v1  (${db.embedded ? 'embedded PostgreSQL in ' + config.dataDir : 'DATABASE_URL'})`,
    `  Database: ${statementMode(config)}`,
    `  API docs: ${base}/api/docs`,
    `  Login:    ${base}/login`,
  ];
  if (demo) {
    lines.push(
      '  Demo technician: admin@demo-msp.example / demo-password-123  (TOTP secret JBSWY3DPEHPK3PXP)',
      '  Demo customer:   owner@contoso-dental.example / demo-password-123',
    );
  }
  console.log(lines.join('\n') + '\n');
  const stop = async () => {
    await app.close();
    await db.embedded?.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
