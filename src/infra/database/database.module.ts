import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Db } from './db.service';
import { TenantTransaction } from './tenant-transaction.service';

@Global()
@Module({ providers: [Db, TenantTransaction], exports: [Db, TenantTransaction] })
export class DatabaseModule {
  /** The request-role connection pool (never the owner). */
  static forRoot(appUrl: string, poolSize = 20) {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: appUrl,
          autoLoadEntities: true,
          synchronize: false,
          migrationsRun: false,
          logging: false,
          extra: { max: poolSize, application_name: 'rmm-identity' },
        }),
      ],
    };
  }
}
