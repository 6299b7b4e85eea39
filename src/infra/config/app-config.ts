import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, Min, MinLength, validateSync } from 'class-validator';

const toBool = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : String(value).toLowerCase() === 'true');
const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));

/** The raw environment, validated at boot. Nothing outside src/infra/config reads process.env. */
class EnvVars {
  @IsOptional() @IsIn(['development', 'production', 'test']) NODE_ENV?: string;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(65535) PORT?: number;
  @IsOptional() @IsString() DATABASE_URL?: string;
  @IsOptional() @IsString() DATABASE_APP_URL?: string;
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
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1440) PAM_PENDING_TTL_MINUTES?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) PAM_PREVIEW_SCAN_LIMIT?: number;
  @IsOptional() @IsString() SAML_SP_ENTITY_ID?: string;
  @IsOptional() @IsString() DNS_SERVERS?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() SSO_ALLOW_INSECURE_LOOPBACK_IDP?: boolean;
  @IsOptional() @IsString() SENTRY_DSN?: string;
  @IsOptional() @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL?: string;
  @IsOptional() @IsString() DATA_DIR?: string;
  @IsOptional() @Transform(toBool) @IsBoolean() START_JOBS?: boolean;
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(60000) PRINCIPAL_CACHE_TTL_MS?: number;
}

export class ConfigError extends Error {}

export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  isProduction: boolean;
  port: number;
  /** Owner connection, used by migrations. Unset in development means embedded PostgreSQL. */
  databaseUrl?: string;
  /** Request-role connection; derived from databaseUrl when absent. */
  databaseAppUrl?: string;
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
  sentryDsn?: string;
  logLevel: string;
  dataDir: string;
  startJobs: boolean;
  /** How long a resolved caller (session, memberships, permissions) is reused; 0 disables. */
  principalCacheTtlMs: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Development convenience: secrets that are missing are generated once and kept in the data
 * directory, so tokens and encrypted columns survive a restart of `npm start`.
 */
function devSecret(dataDir: string, name: string): string {
  const file = resolve(dataDir, 'dev-secrets.json');
  const stored: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  if (!stored[name]) {
    stored[name] = randomBytes(32).toString('base64url');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
    console.warn(`[config] ${name} is not set: generated a development value in ${file}. Set it explicitly outside development.`);
  }
  return stored[name];
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const vars = plainToInstance(EnvVars, { ...env }, { enableImplicitConversion: false });
  const errors = validateSync(vars, { skipMissingProperties: false, whitelist: false });
  if (errors.length) {
    const lines = errors.flatMap((e) => Object.values(e.constraints ?? {}).map((m) => `  - ${e.property}: ${m}`));
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const nodeEnv = (vars.NODE_ENV ?? 'development') as AppConfig['nodeEnv'];
  const isProduction = nodeEnv === 'production';
  const dataDir = resolve(vars.DATA_DIR ?? '.data');
  let encryptionKey = vars.SECRET_ENCRYPTION_KEY ?? vars.APP_ENCRYPTION_KEY;
  let jwtSecret = vars.JWT_SECRET;
  if (!encryptionKey || !jwtSecret) {
    if (isProduction) {
      throw new ConfigError(
        'Invalid configuration:\n  - SECRET_ENCRYPTION_KEY (or APP_ENCRYPTION_KEY) and JWT_SECRET are required in production',
      );
    }
    encryptionKey ??= devSecret(dataDir, 'SECRET_ENCRYPTION_KEY');
    jwtSecret ??= devSecret(dataDir, 'JWT_SECRET');
  }
  if (encryptionKey === jwtSecret) {
    throw new ConfigError('Invalid configuration:\n  - JWT_SECRET must differ from the encryption key');
  }
  if (isProduction && vars.SSO_ALLOW_INSECURE_LOOPBACK_IDP) {
    throw new ConfigError('Invalid configuration:\n  - SSO_ALLOW_INSECURE_LOOPBACK_IDP must not be set in production');
  }
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
    sentryDsn: vars.SENTRY_DSN || undefined,
    logLevel: vars.LOG_LEVEL ?? (nodeEnv === 'test' ? 'silent' : 'info'),
    dataDir,
    startJobs: vars.START_JOBS ?? nodeEnv !== 'test',
    principalCacheTtlMs: vars.PRINCIPAL_CACHE_TTL_MS ?? 2000,
  };
}
