import { prepareDatabase } from '../bootstrap';
import { loadConfig } from '../infra/config/app-config';

/** `npm run migration:run`: applies pending migrations (and starts embedded PostgreSQL if needed). */
prepareDatabase(loadConfig())
  .then(async (db) => {
    console.log('Migrations applied.');
    await db.embedded?.stop();
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
