import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import PgBoss from 'pg-boss';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { effectivePeriodSeconds, offerEveryMs, queueEnabled } from './job-timing';

/** pg-boss keeps its tables here, apart from the application's; the request role has no grant on it. */
export const JOBS_SCHEMA = 'pgboss';
/** Connections of pg-boss's own pool (owner URL, direct): fetches, completions, schedules, maintenance. */
const JOBS_POOL_SIZE = 4;
/** How often an idle worker asks for a job, unless the job's period is shorter. */
const POLL_SECONDS = 2;

/** Queue-level behaviour of a job: what happens when its handler throws or never returns. */
export interface RetryPolicy {
  /** Further attempts after a failure (0: a failed run is final). */
  retryLimit?: number;
  /** Seconds before the first retry; with `retryBackoff` each retry waits about twice as long as the last. */
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /** A run still active after this long counts as failed (its instance died or hung) and is retried elsewhere. */
  expireInSeconds?: number;
}

export interface SendOptions extends RetryPolicy {
  /** With `singletonSeconds`: at most one job per key and time slot, whichever instance sends it. */
  singletonKey?: string;
  singletonSeconds?: number;
  startAfterSeconds?: number;
}

/** What a handler learns about its run. */
export interface JobRun {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
  retryLimit: number;
  /** Start of the time slot of a throttled job (`every`), else null. */
  slot: Date | null;
}

export type JobHandler<T> = (data: T, run: JobRun) => Promise<unknown>;

type Registration =
  | { kind: 'cron'; name: string; cron: string; handler: JobHandler<object>; policy: RetryPolicy }
  | { kind: 'every'; name: string; periodSeconds: number; handler: JobHandler<object>; policy: RetryPolicy }
  | { kind: 'work'; name: string; handler: JobHandler<object>; policy: RetryPolicy };

/**
 * Background work on pg-boss (docs/operations.md, "Background jobs"). Modules register their
 * jobs in `onModuleInit`; when START_JOBS is true the instance starts pg-boss once the
 * application has booted, creates the queues, and schedules and works them. pg-boss connects
 * with the owner URL (DATABASE_URL), straight to PostgreSQL, and creates its schema itself at
 * start; the handlers do their work on the application's pool, in system context, as before.
 *
 * - `schedule(name, cron, …)`: a pg-boss schedule; one run per cron tick across every instance.
 * - `every(name, seconds, …)`: sub-minute periods, which cron cannot express: every instance
 *   offers a run for the current time slot (`singletonSeconds`), and pg-boss keeps one per slot.
 * - `work(name, …)` and `send(name, data, …)`: a queue of one-off jobs.
 *
 * With START_JOBS false nothing starts and registrations are ignored; `running` tells callers
 * that enqueue work (imports) to run it themselves.
 */
@Injectable()
export class JobsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Jobs');
  private readonly pending: Registration[] = [];
  private readonly tickers: NodeJS.Timeout[] = [];
  private boss: PgBoss | null = null;
  private stopping: Promise<void> | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Whether this instance runs background jobs (START_JOBS) and pg-boss has started. */
  get running(): boolean {
    return this.boss !== null && this.stopping === null;
  }

  /** A pg-boss schedule (UTC cron, minute granularity): one run per tick across every instance. */
  schedule<T extends object>(name: string, cron: string, handler: JobHandler<T>, policy: RetryPolicy = {}): Promise<void> {
    return this.register({ kind: 'cron', name, cron, handler: handler as JobHandler<object>, policy });
  }

  /** One run per `periodSeconds` (1–60) slot across every instance. */
  every(name: string, periodSeconds: number, handler: JobHandler<Record<string, never>>, policy: RetryPolicy = {}): Promise<void> {
    const period = effectivePeriodSeconds(periodSeconds, this.config.jobsTest.intervalSeconds);
    return this.register({ kind: 'every', name, periodSeconds: period, handler: handler as JobHandler<object>, policy });
  }

  /** A worker for jobs sent with `send`. */
  work<T extends object>(name: string, handler: JobHandler<T>, policy: RetryPolicy = {}): Promise<void> {
    return this.register({ kind: 'work', name, handler: handler as JobHandler<object>, policy });
  }

  /** Enqueues a job; resolves to its id, or null when a singleton key already holds the slot. */
  async send<T extends object>(name: string, data: T, opts: SendOptions = {}): Promise<string | null> {
    if (!this.boss) throw new Error(`cannot send ${name}: background jobs do not run on this instance (START_JOBS)`);
    return this.boss.send(name, data, toSendOptions(opts));
  }

  /** The pg-boss instance, for operators' and tests' reads (job states, queues). */
  get client(): PgBoss | null {
    return this.boss;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.startJobs) return;
    if (!this.config.databaseUrl) throw new Error('START_JOBS needs the owner connection (DATABASE_URL) for pg-boss');
    const boss = new PgBoss({
      connectionString: this.config.databaseUrl,
      schema: JOBS_SCHEMA,
      max: JOBS_POOL_SIZE,
      application_name: 'rmm-jobs',
      // Completed jobs leave the live table after an hour; failed ones stay a week for operators.
      archiveCompletedAfterSeconds: 3600,
      archiveFailedAfterSeconds: 7 * 24 * 3600,
      deleteAfterDays: 7,
    });
    boss.on('error', (err) => {
      // Once the stop has begun, a connection the server ends (a local PostgreSQL stopping with the
      // service) is part of the stop, not a fault to report.
      if (this.stopping) this.logger.debug({ err }, 'pg-boss connection ended during the stop');
      else this.logger.error({ err }, 'pg-boss error');
    });
    await boss.start();
    this.boss = boss;
    const registered = this.pending.splice(0);
    for (const r of registered) await this.apply(r);
    this.logger.log(`pg-boss started on the owner connection (schema ${JOBS_SCHEMA}); queues: ${registered.map((r) => r.name).join(', ') || 'none'}`);
  }

  onModuleDestroy(): Promise<void> {
    return this.stop(this.config.shutdownGraceMs);
  }

  /**
   * Stops offering and fetching jobs, lets the runs under way finish for up to `timeoutMs`,
   * then hands back those still active (pg-boss fails them, so they are retried elsewhere)
   * and closes pg-boss's pool. Idempotent.
   */
  stop(timeoutMs: number): Promise<void> {
    this.stopping ??= (async () => {
      for (const t of this.tickers.splice(0)) clearInterval(t);
      await this.boss?.stop({ graceful: true, wait: true, close: true, timeout: Math.max(1000, timeoutMs) });
    })();
    return this.stopping;
  }

  private async register(r: Registration): Promise<void> {
    if (!this.config.startJobs || !queueEnabled(r.name, this.config.jobsTest.queues)) return;
    if (this.boss) return this.apply(r);
    this.pending.push(r);
  }

  private async apply(r: Registration): Promise<void> {
    const boss = this.boss as PgBoss;
    const queue: PgBoss.Queue = {
      name: r.name,
      retryLimit: r.policy.retryLimit ?? 0,
      retryDelay: r.policy.retryDelaySeconds ?? 0,
      retryBackoff: r.policy.retryBackoff ?? false,
      expireInSeconds: r.policy.expireInSeconds ?? 15 * 60,
    };
    await ensureQueue(boss, queue);
    const pollingIntervalSeconds = r.kind === 'every' ? Math.max(0.5, Math.min(POLL_SECONDS, r.periodSeconds / 2)) : POLL_SECONDS;
    await boss.work<object>(r.name, { includeMetadata: true, batchSize: 1, pollingIntervalSeconds }, async ([job]) => {
      try {
        return await r.handler(job.data, { id: job.id, retryCount: job.retryCount, retryLimit: job.retryLimit, slot: job.singletonOn ?? null });
      } catch (err) {
        this.logger.warn({ err, queue: r.name, jobId: job.id, retryCount: job.retryCount }, 'Job failed');
        throw err;
      }
    });
    if (r.kind === 'cron') await boss.schedule(r.name, r.cron, {}, { tz: 'UTC' });
    if (r.kind === 'every') {
      const offer = () =>
        boss.send(r.name, {}, { singletonKey: r.name, singletonSeconds: r.periodSeconds }).catch((err: unknown) => this.logger.error({ err, queue: r.name }, 'Could not offer a job run'));
      void offer();
      const ticker = setInterval(() => void offer(), offerEveryMs(r.periodSeconds));
      ticker.unref();
      this.tickers.push(ticker);
    }
  }
}

/**
 * Creates the queue, or brings its options up to date. pg-boss 10 creates a queue's partition
 * without a lock, so instances booting together can deadlock on it (seen with three): the loser
 * waits a moment and finds the queue created by the winner.
 */
async function ensureQueue(boss: PgBoss, queue: PgBoss.Queue): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (await boss.getQueue(queue.name)) return await boss.updateQueue(queue.name, queue);
      return await boss.createQueue(queue.name, queue);
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 200) * attempt));
    }
  }
}

function toSendOptions(o: SendOptions): PgBoss.SendOptions {
  const out: PgBoss.SendOptions = {};
  if (o.retryLimit !== undefined) out.retryLimit = o.retryLimit;
  if (o.retryDelaySeconds !== undefined) out.retryDelay = o.retryDelaySeconds;
  if (o.retryBackoff !== undefined) out.retryBackoff = o.retryBackoff;
  if (o.expireInSeconds !== undefined) out.expireInSeconds = o.expireInSeconds;
  if (o.singletonKey !== undefined) out.singletonKey = o.singletonKey;
  if (o.singletonSeconds !== undefined) out.singletonSeconds = o.singletonSeconds;
  if (o.startAfterSeconds !== undefined) out.startAfter = o.startAfterSeconds;
  return out;
}
