import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, resolve } from 'node:path';
import { FileLockOptions, withFileLock } from '../fs/file-lock';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, MinLength, ValidateBy, validateSync } from 'class-validator';

const toBool = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : String(value).toLowerCase() === 'true');
/** Decimal digits only: " 80", "0x50" or "1e3" stay strings, so they are refused rather than read as something else. */
const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : /^\d{1,15}$/.test(String(value)) ? Number(value) : value);

/**
 * A whole number in [min, max], with one message that says so and shows what was given
 * (`PORT must be a whole number from 0 to 65535, not "abc"`), instead of three range messages
 * about a value that is not a number. Only for numeric settings: the value is printed.
 */
const EnvInt = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  ValidateBy({
    name: 'envInt',
    validator: {
      validate: (value) => typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max,
      defaultMessage: (args) =>
        `${args?.property} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}, not ${JSON.stringify(String(args?.value).slice(0, 32))}`,
    },
  });

/** The OpenTelemetry specification's built-in samplers (OTEL_TRACES_SAMPLER). */
const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** The raw environment, validated at boot. Nothing outside src/infra/config reads process.env. */
class EnvVars {
  @IsOptional() @IsIn(['development', 'production', 'test']) NODE_ENV?: string;
  @IsOptional() @Transform(toInt) @EnvInt(0, 65535) PORT?: number;
  @IsOptional() @IsString() DATABASE_URL?: string;
  @IsOptional() @IsString() DATABASE_APP_URL?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() DATABASE_PREPARED_STATEMENTS?: boolean;
  @IsOptional() @Transform(toInt) @EnvInt(1, 1000) DATABASE_POOL_SIZE?: number;
  @IsOptional() @Transform(toInt) @EnvInt(0, 1000) DATABASE_POOL_WARM?: number;
  @IsOptional() @Transform(toInt) @EnvInt(100, 600000) DATABASE_POOL_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(0, 86400000) DATABASE_STATEMENT_TIMEOUT_MS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(0, 86400000) DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS?: number;
  @IsOptional() @IsString() PUBLIC_URL?: string;
  @IsOptional() @IsString() PUBLIC_APP_URL?: string;
  @IsOptional() @IsString() DASHBOARD_URL?: string;
  @IsOptional() @IsString() @MinLength(32, { message: 'SECRET_ENCRYPTION_KEY must be at least 32 characters' }) SECRET_ENCRYPTION_KEY?: string;
  @IsOptional() @IsString() @MinLength(32, { message: 'APP_ENCRYPTION_KEY must be at least 32 characters' }) APP_ENCRYPTION_KEY?: string;
  @IsOptional() @IsString() SECRET_ENCRYPTION_KEYS_PREVIOUS?: string;
  @IsOptional() @IsString() @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' }) JWT_SECRET?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() IS_HOSTED?: boolean;
  @IsOptional() @IsString() REDIS_URL?: string;
  @IsOptional() @IsString() SMTP_URL?: string;
  @IsOptional() @IsString() MAIL_FROM?: string;
  @IsOptional() @IsString() PUSH_GATEWAY_URL?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() PAM_ACTUATOR_ENABLED?: boolean;
  @IsOptional() @Transform(toInt) @EnvInt(1, 1440) PAM_PENDING_TTL_MINUTES?: number;
  @IsOptional() @Transform(toInt) @EnvInt(1) PAM_PREVIEW_SCAN_LIMIT?: number;
  @IsOptional() @IsString() SAML_SP_ENTITY_ID?: string;
  @IsOptional() @IsString() DNS_SERVERS?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() SSO_ALLOW_INSECURE_LOOPBACK_IDP?: boolean;
  @IsOptional() @Transform(toBool) @IsBoolean() WEBHOOKS_ALLOW_INSECURE_LOOPBACK?: boolean;
  @IsOptional() @Transform(toInt) @EnvInt(1000, 30000) WEBHOOK_TIMEOUT_MS?: number;
  @IsOptional() @IsString() SENTRY_DSN?: string;
  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL?: string;
  @IsOptional() @IsString() DATA_DIR?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() START_JOBS?: boolean;
  @IsOptional() @Transform(toInt) @EnvInt(1, 3600) JOBS_TEST_INTERVAL_SECONDS?: number;
  @IsOptional() @IsString() JOBS_TEST_QUEUES?: string;
  @IsOptional() @Transform(toInt) @EnvInt(0, 60000) PRINCIPAL_CACHE_TTL_MS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(1, 3600) AGENT_COMMAND_REDELIVER_SECONDS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(1000, 600000) SHUTDOWN_GRACE_MS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(0, 600000) SHUTDOWN_LISTEN_MS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(50, 3600000) AGENT_PRESENCE_FLUSH_MS?: number;
  @IsOptional() @Transform(toInt) @EnvInt(100, 86400000) AGENT_ONLINE_THRESHOLD_MS?: number;
  @IsOptional() @IsString() TRUST_PROXY?: string;
  @IsOptional() @IsString() @MinLength(32, { message: 'METRICS_TOKEN must be at least 32 characters' }) METRICS_TOKEN?: string;
  @IsOptional() @IsString() OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  @IsOptional() @IsString() OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  @IsOptional() @IsString() OTEL_TRACES_SAMPLER?: string;
  @IsOptional() @IsString() OTEL_TRACES_SAMPLER_ARG?: string;
}

export class ConfigError extends Error {}

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  isProduction: boolean;
  port: number;
  /** Owner connection, used by migrations. Unset in development means embedded PostgreSQL. */
  databaseUrl?: string;
  /** Request-role connection; required in production, derived from databaseUrl (development password) otherwise. */
  databaseAppUrl?: string;
  /**
   * Hot-path statements as client-named prepared statements, kept per connection. Off (the
   * default) they run unnamed, which is correct behind any transaction pooler. On only when the
   * request role connects straight to PostgreSQL, or through PgBouncer 1.21 or later with
   * max_prepared_statements set.
   */
  databasePreparedStatements: boolean;
  /** Connections of the request role's pool. */
  databasePoolSize: number;
  /**
   * Connections of the request role's pool opened before the instance listens and kept open while
   * idle (at most the pool size): a start or a quiet spell then costs no connection set-up under load.
   */
  databasePoolWarm: number;
  /** How long a request waits for a pooled connection (or a new one to open) before it is answered 503. */
  databasePoolTimeoutMs: number;
  /** The request role's statement_timeout, set on the role in the database so it holds behind a pooler too; 0 = none. */
  databaseStatementTimeoutMs: number;
  /** The request role's idle_in_transaction_session_timeout: a transaction left idle loses its connection; 0 = none. */
  databaseIdleInTransactionTimeoutMs: number;
  publicUrl: string;
  encryptionKey: string;
  previousEncryptionKeys: string[];
  jwtSecret: string;
  isHosted: boolean;
  redisUrl?: string;
  smtpUrl?: string;
  mailFrom: string;
  pushGatewayUrl?: string;
  pamActuatorEnabled: boolean;
  pamPendingTtlMinutes: number;
  pamPreviewScanLimit: number;
  samlSpEntityId?: string;
  dnsServers: string[];
  ssoAllowInsecureLoopbackIdp: boolean;
  /**
   * Development and tests only (refused in production): webhook subscriptions may name, and
   * deliveries reach, http://127.0.0.1, http://[::1] and http://localhost, for a receiver on the
   * same machine. Nothing else becomes reachable.
   */
  webhooksAllowInsecureLoopback: boolean;
  /** Whole-call budget of one webhook delivery attempt (DNS, connect, TLS, answer). */
  webhookTimeoutMs: number;
  sentryDsn?: string;
  logLevel: string;
  dataDir: string;
  startJobs: boolean;
  /**
   * Tests only (NODE_ENV=test, refused elsewhere): the period of every sub-minute job
   * (`JOBS_TEST_INTERVAL_SECONDS`), and the only queues this instance schedules and works
   * (`JOBS_TEST_QUEUES`, comma-separated), so a test's instances leave the shared database's
   * other work alone.
   */
  jobsTest: { intervalSeconds?: number; queues?: string[] };
  /** How long a resolved caller (session, memberships, permissions) is reused; 0 disables. */
  principalCacheTtlMs: number;
  /** After how long a delivered command that its agent has not acknowledged is handed out again. */
  agentCommandRedeliverSeconds: number;
  /** How long a stop may take from the signal: in-flight requests, job runs and after-response tasks (docs/operations.md). */
  shutdownGraceMs: number;
  /** How long the listener stays open after the signal, answering readiness 503, so a load balancer sees it before connections are refused. */
  shutdownListenMs: number;
  /**
   * How often an instance writes the agents it has seen (agents.last_seen_at): one statement per
   * flush for all of them, so an agent costs at most one write per interval however often it calls.
   */
  agentPresenceFlushMs: number;
  /** A device's agent is `online` while it was last seen within this; more than twice the flush interval (docs/pam-lifecycle.md). */
  agentOnlineThresholdMs: number;
  /**
   * Which proxies' `X-Forwarded-For` gives the client address (Express's `trust proxy`): a hop
   * count, or the names and addresses of trusted proxies. Per-address rate limits depend on it.
   */
  trustProxy: number | string;
  /**
   * The bearer token Prometheus sends to GET /metrics. Without it, production answers /metrics
   * 404 and other environments answer callers on this machine only (docs/operations.md, "Metrics").
   */
  metricsToken?: string;
  /** Where spans are sent (OTLP over HTTP); unset, tracing is off and none of it is loaded (docs/operations.md, "Traces"). */
  tracing: TracingSettings | null;
}

export interface TracingSettings {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** Which traces are recorded: OTEL_TRACES_SAMPLER, default `parentbased_always_on` (every request, and a caller's decision honoured). */
  sampler: TraceSamplerName;
  /** The share of traces a `traceidratio` sampler records, 0 to 1 (OTEL_TRACES_SAMPLER_ARG, default 1). */
  samplerRatio: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Processes that start together (two test runs, a test run and `npm start`) agree on one generated value. */
const SECRET_LOCK: FileLockOptions = {
  waitMs: 10_000,
  staleMs: 30_000,
  pollMs: 20,
  timeout: (lock) => new ConfigError(`Invalid configuration:\n  - could not lock ${lock} to generate a development secret`),
};

/**
 * Development convenience: secrets that are missing are generated once and kept in the data
 * directory, so tokens, encrypted columns and the request role's password survive a restart of
 * `npm start`. The file is replaced atomically, so a reader never sees half of it.
 */
function devSecret(dataDir: string, name: string, warning = `${name} is not set`): string {
  const file = resolve(dataDir, 'dev-secrets.json');
  const read = (): Record<string, string> => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {});
  const known = read()[name];
  if (known) return known;
  mkdirSync(dirname(file), { recursive: true });
  return withFileLock(`${file}.lock`, SECRET_LOCK, () => {
    const stored = read();
    if (!stored[name]) {
      stored[name] = randomBytes(32).toString('base64url');
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(stored, null, 2), { mode: 0o600 });
      renameSync(tmp, file);
      console.warn(`[config] ${warning}: generated a development value in ${file}. Set it explicitly outside development.`);
    }
    return stored[name];
  });
}

/** A development secret already kept in the data directory, without generating one. */
export function readDevSecret(dataDir: string, name: string): string | undefined {
  const file = resolve(dataDir, 'dev-secrets.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)[name] || undefined;
  } catch {
    return undefined;
  }
}

/** Whether the stack trace of a failed start is wanted (LOG_LEVEL=debug or trace), read without validating the rest. */
export function debugRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace';
}

/** The data directory (DATA_DIR, default `.data`), for code that runs before or without loadConfig. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.DATA_DIR ?? '.data');
}

/**
 * The password of the request role when its connection is derived from the owner URL
 * (DATABASE_APP_URL unset, never in production): random, generated once and kept with the other
 * development secrets. Every process using the same data directory (the service, the test
 * runs' global setup, the benchmark) sets the same value, so one setting it never breaks the
 * connection pools another has open on the same cluster.
 */
export function developmentAppRolePassword(dataDir: string = defaultDataDir()): string {
  return devSecret(dataDir, 'DATABASE_APP_PASSWORD', 'DATABASE_APP_URL is not set (password of the request role app_user)');
}

/**
 * Tracing from the standard OpenTelemetry variables, or null when no OTLP endpoint is set. As the
 * OpenTelemetry specification says, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the traces URL itself and
 * OTEL_EXPORTER_OTLP_ENDPOINT a base to which `v1/traces` is appended; the first wins. The sampler
 * variables are read only when tracing is on (a cluster may set them for other services). Read on
 * its own, before anything else is loaded (src/infra/tracing/tracing.ts), and again by loadConfig,
 * which refuses a malformed value. No message repeats an endpoint: it may hold a credential.
 */
export function tracingSettings(env: NodeJS.ProcessEnv = process.env): TracingSettings | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!traces && !base) return null;
  const name = traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const refuse = (why: string) =>
    new ConfigError(`Invalid configuration:\n  - ${name} ${why} (${traces ? 'the OTLP/HTTP traces URL, for example http://otel-collector:4318/v1/traces' : "the collector's OTLP/HTTP address, for example http://otel-collector:4318"})`);
  let url: URL;
  try {
    url = new URL((traces || base) as string);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must be an http or https URL');
  if (url.username || url.password) throw refuse('must not hold a user name or password: send credentials as headers with OTEL_EXPORTER_OTLP_HEADERS');
  if (!traces) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  const sampler = (env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on') as TraceSamplerName;
  if (!TRACE_SAMPLERS.includes(sampler)) {
    throw new ConfigError(`Invalid configuration:\n  - OTEL_TRACES_SAMPLER must be one of ${TRACE_SAMPLERS.join(', ')}, not ${JSON.stringify(sampler.slice(0, 32))}`);
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const samplerRatio = arg ? Number(arg) : 1;
  if (arg && (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(arg) || !(samplerRatio >= 0 && samplerRatio <= 1))) {
    throw new ConfigError(`Invalid configuration:\n  - OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of traces recorded), not ${JSON.stringify(String(arg).slice(0, 32))}`);
  }
  return { tracesUrl: url.toString(), sampler, samplerRatio };
}

/** Why a production DATABASE_APP_URL is unacceptable, or null. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: a number of hops (0–10), or a comma-separated list of `loopback`, `linklocal`,
 * `uniquelocal` and proxy addresses with an optional prefix length. `true` (trust every hop) is
 * refused: any client could then choose its own address and walk past every per-address limit.
 */
export function parseTrustProxy(raw: string | undefined): number | string {
  if (raw === undefined || raw.trim() === '') return 'loopback';
  const value = raw.trim();
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new ConfigError(`Invalid configuration:\n  - TRUST_PROXY must be a hop count from 0 to 10 or a list of proxies, not "${value}"`);
    return hops;
  }
  const entries = value.split(',').map((e) => e.trim());
  const bad = entries.find((entry) => {
    if (PROXY_NAMES.has(entry)) return false;
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    if (!family || rest.length) return true;
    return prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
  });
  if (bad !== undefined) {
    throw new ConfigError(
      `Invalid configuration:\n  - TRUST_PROXY lists "${bad}": use a hop count, loopback, linklocal, uniquelocal or proxy addresses (with an optional /prefix)`,
    );
  }
  return entries.join(',');
}

function appUrlProblem(appUrl: string, ownerUrl: string | undefined): string | null {
  let app: URL;
  try {
    app = new URL(appUrl);
  } catch {
    return 'is not a URL';
  }
  const password = decodeURIComponent(app.password);
  if (!password) return 'has no password: give the request role a password of its own';
  if (password === 'app_user' || password === decodeURIComponent(app.username)) return 'uses a default password (the role name): give the request role a password of its own';
  let ownerPassword = '';
  try {
    ownerPassword = ownerUrl ? decodeURIComponent(new URL(ownerUrl).password) : '';
  } catch {
    // DATABASE_URL is checked where it is used
  }
  if (ownerPassword && password === ownerPassword) return "uses the owner's password (DATABASE_URL): give the request role a password of its own";
  return null;
}

export interface LoadConfigOptions {
  /**
   * Write nothing (`npm run doctor`): a development secret that is not stored yet is made up for
   * this process only, instead of generated into the data directory.
   */
  readOnly?: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: LoadConfigOptions = {}): AppConfig {
  const vars = plainToInstance(EnvVars, { ...env }, { enableImplicitConversion: false });
  const errors = validateSync(vars, { skipMissingProperties: false, whitelist: false });
  if (errors.length) {
    const lines = errors.flatMap((e) => Object.values(e.constraints ?? {}).map((m) => `  - ${e.property}: ${m}`));
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const nodeEnv = (vars.NODE_ENV ?? 'development') as AppConfig['nodeEnv'];
  const isProduction = nodeEnv === 'production';
  const dataDir = defaultDataDir({ DATA_DIR: vars.DATA_DIR });
  let encryptionKey = vars.SECRET_ENCRYPTION_KEY ?? vars.APP_ENCRYPTION_KEY;
  let jwtSecret = vars.JWT_SECRET;
  if (!encryptionKey || !jwtSecret) {
    if (isProduction) {
      const missing = [...(encryptionKey ? [] : ['SECRET_ENCRYPTION_KEY (or APP_ENCRYPTION_KEY)']), ...(jwtSecret ? [] : ['JWT_SECRET'])];
      throw new ConfigError(
        [
          'Invalid configuration:',
          ...missing.map((name) => `  - ${name} is required in production: set it to 32 or more random characters, for example the output of: openssl rand -base64 48`),
          ...(encryptionKey ? [] : ['  - keep SECRET_ENCRYPTION_KEY once data is stored: the secrets in the database are encrypted with it (rotation: SECRET_ENCRYPTION_KEYS_PREVIOUS)']),
        ].join('\n'),
      );
    }
    const secret = options.readOnly ? (name: string) => readDevSecret(dataDir, name) ?? randomBytes(32).toString('base64url') : (name: string) => devSecret(dataDir, name);
    encryptionKey ??= secret('SECRET_ENCRYPTION_KEY');
    jwtSecret ??= secret('JWT_SECRET');
  }
  if (encryptionKey === jwtSecret) {
    throw new ConfigError('Invalid configuration:\n  - JWT_SECRET must differ from the encryption key');
  }
  // DATABASE_APP_URL itself is required in production by prepareDatabase (bootstrap.ts), next to DATABASE_URL.
  const appUrlIssue = isProduction && vars.DATABASE_APP_URL ? appUrlProblem(vars.DATABASE_APP_URL, vars.DATABASE_URL) : null;
  if (appUrlIssue) throw new ConfigError(`Invalid configuration:\n  - DATABASE_APP_URL ${appUrlIssue}`);
  if (nodeEnv !== 'test' && (vars.JOBS_TEST_INTERVAL_SECONDS !== undefined || vars.JOBS_TEST_QUEUES)) {
    throw new ConfigError('Invalid configuration:\n  - JOBS_TEST_INTERVAL_SECONDS and JOBS_TEST_QUEUES are accepted only when NODE_ENV=test');
  }
  if (isProduction && vars.SSO_ALLOW_INSECURE_LOOPBACK_IDP) {
    throw new ConfigError('Invalid configuration:\n  - SSO_ALLOW_INSECURE_LOOPBACK_IDP must not be set in production');
  }
  if (isProduction && vars.WEBHOOKS_ALLOW_INSECURE_LOOPBACK) {
    throw new ConfigError('Invalid configuration:\n  - WEBHOOKS_ALLOW_INSECURE_LOOPBACK must not be set in production');
  }
  const agentPresenceFlushMs = vars.AGENT_PRESENCE_FLUSH_MS ?? 30_000;
  const agentOnlineThresholdMs = vars.AGENT_ONLINE_THRESHOLD_MS ?? 180_000;
  if (agentOnlineThresholdMs <= 2 * agentPresenceFlushMs) {
    // A stored sighting may be a flush interval old when written and wait another one to be written.
    throw new ConfigError(
      `Invalid configuration:\n  - AGENT_ONLINE_THRESHOLD_MS (${agentOnlineThresholdMs}) must be more than twice AGENT_PRESENCE_FLUSH_MS (${agentPresenceFlushMs}), or agents that call steadily would show offline`,
    );
  }
  const tracing = tracingSettings({
    OTEL_EXPORTER_OTLP_ENDPOINT: vars.OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_TRACES_SAMPLER: vars.OTEL_TRACES_SAMPLER,
    OTEL_TRACES_SAMPLER_ARG: vars.OTEL_TRACES_SAMPLER_ARG,
  });
  const publicUrl = (vars.PUBLIC_URL ?? vars.PUBLIC_APP_URL ?? vars.DASHBOARD_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
  try {
    new URL(publicUrl);
  } catch {
    throw new ConfigError(`Invalid configuration:\n  - PUBLIC_URL is not a URL: ${publicUrl}`);
  }
  return {
    nodeEnv,
    isProduction,
    port: vars.PORT ?? 3000,
    databaseUrl: vars.DATABASE_URL,
    databaseAppUrl: vars.DATABASE_APP_URL,
    databasePreparedStatements: vars.DATABASE_PREPARED_STATEMENTS ?? false,
    databasePoolSize: vars.DATABASE_POOL_SIZE ?? 20,
    databasePoolWarm: Math.min(vars.DATABASE_POOL_WARM ?? (isProduction ? (vars.DATABASE_POOL_SIZE ?? 20) : 0), vars.DATABASE_POOL_SIZE ?? 20),
    databasePoolTimeoutMs: vars.DATABASE_POOL_TIMEOUT_MS ?? 5000,
    databaseStatementTimeoutMs: vars.DATABASE_STATEMENT_TIMEOUT_MS ?? 30_000,
    databaseIdleInTransactionTimeoutMs: vars.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS ?? 60_000,
    publicUrl,
    encryptionKey,
    previousEncryptionKeys: (vars.SECRET_ENCRYPTION_KEYS_PREVIOUS ?? '').split(',').map((k) => k.trim()).filter(Boolean),
    jwtSecret,
    isHosted: vars.IS_HOSTED ?? false,
    redisUrl: vars.REDIS_URL || undefined,
    smtpUrl: vars.SMTP_URL || undefined,
    mailFrom: vars.MAIL_FROM ?? 'no-reply@localhost',
    pushGatewayUrl: vars.PUSH_GATEWAY_URL || undefined,
    pamActuatorEnabled: vars.PAM_ACTUATOR_ENABLED ?? false,
    pamPendingTtlMinutes: vars.PAM_PENDING_TTL_MINUTES ?? 15,
    pamPreviewScanLimit: vars.PAM_PREVIEW_SCAN_LIMIT ?? 1_000_000,
    samlSpEntityId: vars.SAML_SP_ENTITY_ID || undefined,
    dnsServers: (vars.DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    ssoAllowInsecureLoopbackIdp: vars.SSO_ALLOW_INSECURE_LOOPBACK_IDP ?? false,
    webhooksAllowInsecureLoopback: (vars.WEBHOOKS_ALLOW_INSECURE_LOOPBACK ?? false) && !isProduction,
    webhookTimeoutMs: vars.WEBHOOK_TIMEOUT_MS ?? 10_000,
    sentryDsn: vars.SENTRY_DSN || undefined,
    logLevel: vars.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info'),
    dataDir,
    startJobs: vars.START_JOBS ?? nodeEnv !== 'test',
    jobsTest: {
      intervalSeconds: vars.JOBS_TEST_INTERVAL_SECONDS,
      queues: vars.JOBS_TEST_QUEUES ? vars.JOBS_TEST_QUEUES.split(',').map((q) => q.trim()).filter(Boolean) : undefined,
    },
    principalCacheTtlMs: vars.PRINCIPAL_CACHE_TTL_MS ?? 2000,
    agentCommandRedeliverSeconds: vars.AGENT_COMMAND_REDELIVER_SECONDS ?? 30,
    trustProxy: parseTrustProxy(vars.TRUST_PROXY),
    metricsToken: vars.METRICS_TOKEN || undefined,
    tracing,
    shutdownGraceMs: vars.SHUTDOWN_GRACE_MS ?? 10_000,
    agentPresenceFlushMs,
    agentOnlineThresholdMs,
    shutdownListenMs: Math.min(vars.SHUTDOWN_LISTEN_MS ?? (isProduction ? 2000 : 0), vars.SHUTDOWN_GRACE_MS ?? 10_000),
  };
}
