import { DataSource, DataSourceOptions } from 'typeorm';
import { migrations } from './migrations';

/** The owner connection: runs migrations and owns the tables. Never used to serve requests. */
export function ownerDataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    logging: false,
  };
}

export function createOwnerDataSource(url: string): DataSource {
  return new DataSource(ownerDataSourceOptions(url));
}
