import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/app-config';
import { applyRequestRoleTimeouts } from './app-role';
import { DbService } from './db.service';
import { PgListener } from './pg-listener.service';
import { PoolWarmer } from './pool-warmer';
import { TenantTransactionService } from './tenant-transaction.service';

export type DatabasePoolSettings = Pick<AppConfig, 'databasePoolSize' | 'databasePoolWarm' | 'databasePoolTimeoutMs' | 'databaseStatementTimeoutMs' | 'databaseIdleInTransactionTimeoutMs'>;

/**
 * Every wait on the database is bounded: a request waits at most `databasePoolTimeoutMs` for a
 * pooled connection (or a new one to open), a statement runs at most `databaseStatementTimeoutMs`,
 * and a transaction left idle loses its connection after `databaseIdleInTransactionTimeoutMs`.
 * Each failure is answered 503 with Retry-After by the global filter, so requests do not pile up
 * behind a slow or absent database (docs/operations.md).
 */
@Global()
@Module({ providers: [DbService, TenantTransactionService, PgListener, PoolWarmer], exports: [DbService, TenantTransactionService, PgListener] })
export class DatabaseModule {
  /** The request-role connection pool (never the owner). */
  static forRoot(appUrl: string, settings: DatabasePoolSettings): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: async () => {
            await applyRequestRoleTimeouts(appUrl, {
              statementTimeoutMs: settings.databaseStatementTimeoutMs,
              idleInTransactionTimeoutMs: settings.databaseIdleInTransactionTimeoutMs,
            });
            return {
              type: 'postgres' as const,
              url: appUrl,
              autoLoadEntities: true,
              synchronize: false,
              migrationsRun: false,
              logging: false,
              // min: the warm connections (PoolWarmer) stay open while idle.
              extra: { max: settings.databasePoolSize, min: settings.databasePoolWarm, connectionTimeoutMillis: settings.databasePoolTimeoutMs, application_name: 'rmm-identity' },
            };
          },
        }),
      ],
    };
  }
}
