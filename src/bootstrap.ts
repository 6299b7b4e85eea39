import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { AppConfig } from './infra/config/app-config';
import { assertRequestRoleIsRestricted } from './infra/database/app-role';
import { startEmbeddedPostgres, EmbeddedDatabase } from './infra/database/embedded-postgres';
import { ensureDatabase, migrate } from './infra/database/migrate';

export interface PreparedDatabase {
  ownerUrl: string;
  appUrl: string;
  embedded: EmbeddedDatabase | null;
}

/** DATABASE_URL, or embedded PostgreSQL in the data directory; then migrations and the request role. */
export async function prepareDatabase(config: AppConfig): Promise<PreparedDatabase> {
  let ownerUrl = config.databaseUrl;
  let embedded: EmbeddedDatabase | null = null;
  if (!ownerUrl) {
    if (config.isProduction) throw new Error('DATABASE_URL is required in production');
    embedded = await startEmbeddedPostgres({ dataDir: join(config.dataDir, 'postgres'), persistent: true });
    const url = new URL(embedded.url);
    url.pathname = '/rmm';
    ownerUrl = url.toString();
  }
  await ensureDatabase(ownerUrl);
  const appUrl = await migrate(ownerUrl, config.databaseAppUrl);
  return { ownerUrl, appUrl, embedded };
}

export async function createApp(config: AppConfig, appUrl: string, opts: { logs?: boolean } = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ config, databaseAppUrl: appUrl }), {
    bufferLogs: opts.logs !== false,
    logger: opts.logs === false ? false : undefined,
    bodyParser: false,
  });
  await configureApp(app, opts);
  await assertRequestRoleIsRestricted((sql) => app.get(DataSource).query(sql));
  return app;
}
