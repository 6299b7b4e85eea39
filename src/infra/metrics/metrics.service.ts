import { Inject, Injectable, Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DbService } from '../database/db.service';
import { JOBS_SCHEMA, JobsService } from '../jobs/jobs.service';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** What a gauge read at scrape returns: one value per label set. */
export type GaugeSample<L extends string> = { labels: Record<L, string>; value: number };

/** The status of an answer as a label: its class, never the exact code. */
export const statusClass = (status: number): string => (status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other');

/** The sign-in protocols counted; `totp` is the second step of a password sign-in. */
export type SignInProtocol = 'password' | 'totp' | 'oidc' | 'saml';

/**
 * Outcomes a sign-in may be counted under: success, a second step asked for, or a public refusal
 * code (the SSO redirect codes, the password route's error codes). Anything else counts as
 * `error`, so no caller can grow the label set.
 */
export const SIGN_IN_OUTCOMES: ReadonlySet<string> = new Set([
  'success',
  'mfa_required',
  'error',
  // Password and second step (AuthErrors).
  'invalid_credentials',
  'invalid_mfa_code',
  'invalid_mfa_token',
  'rate_limited',
  // SSO (LoginErrorCode, docs/sso-login.md).
  'sso_error',
  'invalid_callback',
  'session_expired',
  'sso_config_changed',
  'sso_provider_inactive',
  'sso_email_unverified',
  'sso_domain_unverified',
  'domain_not_allowed',
  'user_not_found',
  'user_disabled',
  'no_org_access',
  'invite_required',
  'default_role_required',
  'invalid_provider_configuration',
  'identity_in_use',
]);

/** SCIM answers as an outcome label, by status. */
export function scimOutcome(status: number): string {
  if (status < 400) return 'success';
  const named: Record<number, string> = { 400: 'invalid', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed', 413: 'too_large', 429: 'rate_limited' };
  return named[status] ?? (status >= 500 ? 'server_error' : 'client_error');
}

/** The SCIM operation of a route template and method: the resource (users, groups, discovery) and the verb. */
export function scimOperation(method: string, route: string | undefined): { resource: string; operation: string } {
  const path = (route ?? '').replace(/^.*\/scim\/v2\/?/, '');
  const [first = '', second] = path.split('/');
  const resource = first === 'Users' ? 'users' : first === 'Groups' ? 'groups' : route ? 'discovery' : 'unmatched';
  const verbs: Record<string, string> = { POST: 'create', PUT: 'replace', PATCH: 'patch', DELETE: 'delete' };
  const operation = verbs[method] ?? (method === 'GET' ? (second ? 'read' : 'list') : 'other');
  return { resource, operation };
}

/**
 * The service's Prometheus metrics (docs/operations.md, "Metrics"). One registry per application
 * instance (tests run several in one process). Counters and the request histogram are updated
 * where things happen; the pool, the pg-boss queues and the gauges other modules register are
 * read at scrape. No label ever carries tenant data: routes are templates, outcomes fixed sets.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly logger = new Logger('Metrics');

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status class, from arrival to the end of the answer',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly ingestDecisions = new Counter({
    name: 'rmm_ingest_decisions_total',
    help: 'Agent-reported elevation prompts by decision (verdict) and flow',
    labelNames: ['verdict', 'flow'] as const,
    registers: [this.registry],
  });

  private readonly signIns = new Counter({
    name: 'rmm_sign_ins_total',
    help: 'Sign-in attempts by protocol and outcome (success, mfa_required, or the public refusal code)',
    labelNames: ['protocol', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly scimOperations = new Counter({
    name: 'rmm_scim_operations_total',
    help: 'SCIM requests by resource, operation and outcome',
    labelNames: ['resource', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(
    db: DbService,
    private readonly jobs: JobsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (config.nodeEnv !== 'test') collectDefaultMetrics({ register: this.registry });
    this.gauge('rmm_db_pool_connections', 'Connections of the request role pool: total open, idle, and requests waiting for one', ['state'], () => {
      const pool = db.pool();
      return [
        { labels: { state: 'total' }, value: pool.totalCount },
        { labels: { state: 'idle' }, value: pool.idleCount },
        { labels: { state: 'waiting' }, value: pool.waitingCount },
      ];
    });
    this.gauge('rmm_jobs_queue_jobs', 'pg-boss jobs per queue and state (created, retry, active, failed); only on instances that run jobs', ['queue', 'state'], () => this.queueJobs());
  }

  /**
   * A gauge whose values are read at each scrape. A collector that fails leaves its gauge empty for
   * that scrape (and logs why); the rest of the scrape is answered.
   */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => Promise<GaugeSample<L>[]> | GaugeSample<L>[]): void {
    const logger = this.logger;
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const s of await read()) this.set(s.labels as never, s.value);
        } catch (err) {
          logger.warn({ err }, `Metric ${name} could not be read`);
        }
      },
    });
  }

  ingestDecision(verdict: 'pending' | 'auto_approved' | 'denied' | 'ignored', flow: string): void {
    this.ingestDecisions.inc({ verdict, flow });
  }

  signIn(protocol: SignInProtocol, outcome: string): void {
    this.signIns.inc({ protocol, outcome: SIGN_IN_OUTCOMES.has(outcome) ? outcome : 'error' });
  }

  /** Counts a sign-in step by how its promise settles: `success` (or what `outcome` names) or the error's public code. */
  countSignIn<T>(protocol: SignInProtocol, work: Promise<T>, outcome: (result: T) => string = () => 'success'): Promise<T> {
    return work.then(
      (result) => {
        this.signIn(protocol, outcome(result));
        return result;
      },
      (error: unknown) => {
        const code = (error as { code?: unknown })?.code;
        this.signIn(protocol, typeof code === 'string' ? code : 'error');
        throw error;
      },
    );
  }

  scim(method: string, route: string | undefined, status: number): void {
    this.scimOperations.inc({ ...scimOperation(method, route), outcome: scimOutcome(status) });
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Live pg-boss jobs by queue and state, in one statement on pg-boss's own pool; none when jobs do not run here. */
  private async queueJobs(): Promise<GaugeSample<'queue' | 'state'>[]> {
    const boss = this.jobs.running ? this.jobs.client : null;
    if (!boss) return [];
    const { rows } = (await boss.getDb().executeSql(
      `SELECT name, state::text AS state, count(*)::int AS n FROM ${JOBS_SCHEMA}.job
        WHERE state IN ('created', 'retry', 'active', 'failed') GROUP BY name, state`,
      [],
    )) as { rows: { name: string; state: string; n: number }[] };
    return rows.map((r) => ({ labels: { queue: r.name, state: r.state }, value: r.n }));
  }
}
