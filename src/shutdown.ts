import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { INestApplication, Logger } from '@nestjs/common';
import { JobsService } from './infra/jobs/jobs.service';
import { stopTracing } from './infra/tracing/tracing-state';
import { DrainState } from './modules/health/drain-state';
import { ImportJob } from './modules/imports/import.job';
import { PushOutboxWorker } from './modules/pam/approvals/push/push-outbox.worker';
import { ElevationExpiryJob } from './modules/pam/requests/elevation-expiry.job';
import { DomainRecheckJob } from './modules/sso/domains/domain-recheck.job';
import { SsoStateCleanupJob } from './modules/sso/saml/sso-state-cleanup.job';

/**
 * The background workers of an instance. Each resolves once its current run on this instance has
 * ended (`onModuleDestroy`, which Nest calls again, harmlessly, when the application closes);
 * pg-boss, which starts their runs, is stopped first (JobsService.stop).
 */
const BACKGROUND_JOBS = [ElevationExpiryJob, PushOutboxWorker, DomainRecheckJob, SsoStateCleanupJob, ImportJob] as const;

/** Past the grace period, the closing steps (pools, Redis) get this long before the process exits 1 regardless. */
export const SHUTDOWN_CLOSE_MARGIN_MS = 5_000;
/** How long the last spans get to reach the collector: within the margin above, so a collector that does not answer costs the stop this at most. */
export const TRACE_FLUSH_MS = 3_000;

export interface ShutdownOptions {
  /** From the signal to the end of in-flight requests, job runs and after-response tasks. */
  graceMs: number;
  /** How long the listener stays open after the signal (readiness 503, every answer `Connection: close`). */
  listenMs: number;
  /** Runs after the application has closed (the embedded PostgreSQL stops here). */
  afterClose?: () => Promise<void>;
  exit?: (code: number) => void;
}

const EXIT_CODE: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Graceful stop on SIGTERM and SIGINT, in this order:
 * 1. readiness answers 503 (`draining`) and every answer carries `Connection: close`, so keep-alive
 *    connections end after their request; the job workers stop starting runs;
 * 2. after `listenMs` the listener closes (new connections are refused) and idle connections are closed;
 * 3. in-flight requests finish, until the deadline (`graceMs` after the signal), when the connections
 *    left are cut (logged);
 * 4. the workers' current runs end (also bounded by the deadline), then the application closes once:
 *    after-response tasks drain (until the deadline), Redis quits, the database pool ends;
 * 5. with tracing on, the spans still buffered are exported (at most TRACE_FLUSH_MS);
 * 6. exit 0. A second signal during the stop exits at once with 128 + the signal number.
 * Returns the stop function, for tests and for callers that stop without a signal.
 */
export function installGracefulShutdown(app: INestApplication, opts: ShutdownOptions): (signal: string) => Promise<void> {
  const logger = new Logger('Shutdown');
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const drain = app.get(DrainState);
  const server = app.getHttpServer() as Server;
  let stopping: Promise<void> | null = null;
  // Answers under way, so that those already in flight when the drain begins also close their connection.
  const inFlight = new Set<ServerResponse>();
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (drain.draining) return closeAfter(res);
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });

  const stop = (signal: string): Promise<void> => {
    if (stopping) {
      logger.warn(`${signal} again while stopping: exiting at once`);
      exit(EXIT_CODE[signal] ?? 1);
      return stopping;
    }
    stopping = run(signal);
    return stopping;
  };

  const run = async (signal: string): Promise<void> => {
    const started = Date.now();
    drain.start(opts.graceMs, started);
    const deadline = started + opts.graceMs;
    // A stop that hangs past its bound (a pool that never ends) must still end the process.
    setTimeout(() => {
      logger.error(`Stop did not finish within ${opts.graceMs + SHUTDOWN_CLOSE_MARGIN_MS} ms: exiting`);
      exit(1);
    }, opts.graceMs + SHUTDOWN_CLOSE_MARGIN_MS).unref();
    logger.log(
      `${signal}: draining (readiness 503; listener closes in ${opts.listenMs} ms; in-flight requests and job runs have until ${opts.graceMs} ms after the signal)`,
    );
    try {
      for (const res of inFlight) closeAfter(res);
      inFlight.clear();
      server.closeIdleConnections();
      const jobs = stopJobs(app, deadline);
      const requests = drainRequests(server, opts.listenMs, deadline, logger);
      await requests;
      const jobsDone = await Promise.race([jobs.then(() => true), sleep(Math.max(0, deadline - Date.now())).then(() => false)]);
      if (!jobsDone) logger.warn('Background job runs still going at the deadline; another instance takes their work over');
      await app.close();
      await opts.afterClose?.();
      await stopTracing(TRACE_FLUSH_MS);
      logger.log(`Stopped in ${Date.now() - started} ms`);
    } catch (err) {
      logger.error(`Stop failed: ${err instanceof Error ? err.message : String(err)}`);
      exit(1);
      return;
    }
    exit(0);
  };

  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => void stop(signal));
  return stop;
}

/** The connection closes once this answer is sent, instead of waiting for another request. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * pg-boss stops fetching and offering jobs at once, waits for the runs under way until the
 * deadline, then fails those still active (so pg-boss retries them on another instance) and
 * closes its pool; the workers' own runs (an import started without pg-boss) are awaited too.
 */
function stopJobs(app: INestApplication, deadline: number): Promise<void> {
  return Promise.allSettled([
    app.get(JobsService, { strict: false }).stop(Math.max(0, deadline - Date.now())),
    ...BACKGROUND_JOBS.map((job) => {
      const worker = app.get<{ onModuleDestroy(): Promise<void> }>(job, { strict: false });
      return worker.onModuleDestroy();
    }),
  ]).then(() => undefined);
}

/**
 * Keeps the listener open for `listenMs`, then closes it and waits for the connections to end,
 * closing those that go idle; at the deadline, cuts the rest.
 */
async function drainRequests(server: Server, listenMs: number, deadline: number, logger: Logger): Promise<void> {
  if (!server.listening) return;
  await sleep(Math.min(listenMs, Math.max(0, deadline - Date.now())));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A keep-alive connection whose answer was already under way when the drain began goes idle without Connection: close.
  const sweeper = setInterval(() => server.closeIdleConnections(), 100);
  try {
    const done = await Promise.race([closed.then(() => true), sleep(Math.max(0, deadline - Date.now())).then(() => false)]);
    if (!done) {
      const open = await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n ?? 0)));
      logger.warn(`Grace period over: closing ${open} connection(s) with requests still in flight`);
      server.closeAllConnections();
      await closed;
    }
  } finally {
    clearInterval(sweeper);
  }
}
