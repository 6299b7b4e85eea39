/**
 * One instance of the service in a process of its own, for the scale-out tests that kill an
 * instance (instance-process.ts starts it). It boots exactly as the in-process instances of the
 * tier do (test-app.ts): configuration from the environment, the request role's URL (through the
 * test file's PgBouncer) from DATABASE_APP_URL, no migration and no demo seed, which stay with
 * the run's global setup. Listens on PORT, on loopback.
 */
import { createApp } from '../../src/bootstrap';
import { loadConfig } from '../../src/infra/config/app-config';

async function main(): Promise<void> {
  const config = loadConfig();
  // With Nest's logger on, a failure to boot is printed (and rejects) instead of exiting silently.
  const app = await createApp(config, process.env.DATABASE_APP_URL as string);
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  process.stdout.write(`instance listening on ${process.env.PORT}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`instance failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
