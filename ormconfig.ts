import { createOwnerDataSource } from './src/infra/database/data-source';
import { loadConfig } from './src/infra/config/app-config';

/**
 * The DataSource the TypeORM CLI uses (`npm run typeorm -- migration:show`). It connects as the
 * owner (DATABASE_URL), which runs migrations; requests never use this connection.
 */
const url = loadConfig().databaseUrl;
if (!url) throw new Error('Set DATABASE_URL to use the TypeORM CLI (npm start runs migrations itself on embedded PostgreSQL)');
export default createOwnerDataSource(url);
