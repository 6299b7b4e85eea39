/**
 * The service in a process of its own with tracing on, for tracing.e2e.test.ts. It starts as
 * main.ts does where tracing is concerned: the tracing module first (an instrumentation patches a
 * module as it is loaded, which a jest worker's own module loader never lets it do), then the app,
 * and the graceful stop of src/shutdown.ts, whose last step exports the spans still buffered. It
 * leaves out what the test run's global setup already did: migrations and the demo seed. The
 * configuration comes from the environment (OTEL_EXPORTER_OTLP_ENDPOINT among it), the request
 * role's URL from DATABASE_APP_URL; it listens on PORT, on loopback.
 */
import '../../../src/infra/tracing/tracing';
import { createApp } from '../../../src/bootstrap';
import { loadConfig } from '../../../src/infra/config/app-config';
import { installGracefulShutdown } from '../../../src/shutdown';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config, process.env.DATABASE_APP_URL as string);
  await app.listen(config.port, '127.0.0.1');
  installGracefulShutdown(app, { graceMs: config.shutdownGraceMs, listenMs: config.shutdownListenMs });
}

main().catch((err: unknown) => {
  process.stderr.write(`instance failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
