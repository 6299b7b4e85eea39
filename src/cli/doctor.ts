/**
 * `npm run doctor` (in the image: `node dist/src/cli/doctor.js`): checks a deployment before it
 * serves, against the configured environment, and prints a table (check, result, what to do);
 * `--json` prints the same as one JSON object. Exits 1 when any check fails, else 0.
 *
 * It changes nothing: the configuration is read without generating development secrets, the owner
 * connection is read-only (default_transaction_read_only), the request role only runs SELECTs, no
 * database or role is created, no migration applied, and the embedded PostgreSQL is never started
 * (a running one is read through the port its postmaster.pid gives).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createTransport } from 'nodemailer';
import { Client, type ClientConfig } from 'pg';
import { AppConfig, ConfigError, loadConfig, readDevSecret } from '../infra/config/app-config';
import { APP_ROLE } from '../infra/database/app-role';
import { migrations } from '../infra/database/migrations';
import { probeRedis } from '../infra/startup/probes';
import { databaseFailure, printableUrl, StartFailure, type DatabaseTarget } from '../infra/startup/start-failure';

export type CheckResult = 'pass' | 'warn' | 'fail' | 'skip';

export interface Check {
  check: string;
  result: CheckResult;
  /** What was found. */
  detail: string;
  /** What to do about it; empty when nothing is to be done. */
  todo: string;
}

export interface DoctorReport {
  ok: boolean;
  checks: Check[];
}

const TIMEOUT_MS = 5000;
/** A SAML SP certificate closer than this to its end is reported (IdPs need time to take a new one). */
const CERT_WARN_DAYS = 30;

const row = (check: string, result: CheckResult, detail: string, todo = ''): Check => ({ check, result, detail, todo });

/** A failed connection as a row: the StartFailure's first line and its "to do". */
function connectionRow(check: string, err: unknown, target: DatabaseTarget): Check {
  const f = databaseFailure(err, target);
  const todo = f.details.find(([label]) => label === 'to do')?.[1] ?? '';
  const cause = f.details.find(([label]) => label === 'cause')?.[1];
  return row(check, 'fail', `${f.what}${cause ? ` (${cause})` : ''}`, todo.replace(/; npm run doctor .*$/, ''));
}

async function withClient<T>(config: ClientConfig, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionTimeoutMillis: TIMEOUT_MS, application_name: 'rmm-doctor', ...config });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The owner connection: DATABASE_URL, or a running embedded PostgreSQL of this data directory. */
function ownerTarget(config: AppConfig): { target?: DatabaseTarget; skip?: Check } {
  if (config.databaseUrl) return { target: { setting: 'DATABASE_URL', url: config.databaseUrl, role: 'the owner role (migrations)' } };
  const pgDir = join(config.dataDir, 'postgres', 'pg');
  try {
    const lines = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
    const [pid, port] = [Number(lines[0]), Number(lines[3])];
    process.kill(pid, 0);
    const { password } = JSON.parse(readFileSync(join(config.dataDir, 'postgres', 'credentials.json'), 'utf8')) as { password: string };
    return {
      target: { setting: `the embedded PostgreSQL (DATA_DIR ${config.dataDir}, process ${pid})`, url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/rmm`, role: 'the owner role (migrations)' },
    };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EPERM') return { skip: row('PostgreSQL (owner)', 'skip', `the embedded PostgreSQL in ${pgDir} runs under another user`) };
    return {
      skip: row('PostgreSQL (owner)', 'skip', `DATABASE_URL is unset and no embedded PostgreSQL runs in ${pgDir}: npm start starts one`, config.isProduction ? 'set DATABASE_URL' : ''),
    };
  }
}

async function checkOwner(config: AppConfig, target: DatabaseTarget): Promise<{ rows: Check[]; reachable: boolean }> {
  const rows: Check[] = [];
  try {
    await withClient({ connectionString: target.url, options: '-c default_transaction_read_only=on' }, async (c) => {
      const [{ version, can_create }] = (
        await c.query<{ version: string; can_create: boolean }>(
          `SELECT current_setting('server_version') AS version, (SELECT rolcreaterole FROM pg_roles WHERE rolname = current_user) AS can_create`,
        )
      ).rows;
      rows.push(row('PostgreSQL (owner)', 'pass', `${target.setting}: ${printableUrl(target.url)}, PostgreSQL ${version}${can_create ? '' : ' (role without CREATEROLE: create the request role as an administrator)'}`));
      rows.push(await checkMigrations(c));
      rows.push(await checkSamlCertificates(c));
    });
    return { rows, reachable: true };
  } catch (err) {
    return { rows: [...rows, connectionRow('PostgreSQL (owner)', err, target)], reachable: false };
  }
}

async function checkMigrations(c: Client): Promise<Check> {
  const known = migrations.map((m) => new m().name as string);
  const present = (await c.query<{ present: boolean }>(`SELECT to_regclass('migrations') IS NOT NULL AS present`)).rows[0].present;
  const applied = present ? (await c.query<{ name: string }>(`SELECT name FROM migrations ORDER BY id`)).rows.map((r) => r.name) : [];
  const unknown = applied.filter((n) => !known.includes(n));
  const pending = known.filter((n) => !applied.includes(n));
  if (unknown.length) {
    return row('migrations', 'fail', `${unknown.length} applied by a newer version of the service (${unknown.slice(0, 2).join(', ')}${unknown.length > 2 ? ', …' : ''})`, 'run the version that applied them; this one refuses to start on this database');
  }
  if (pending.length) {
    return row('migrations', 'fail', `${pending.length} of ${known.length} not applied yet (first: ${pending[0]})`, 'npm run migration:run (a start applies them too, as the owner role)');
  }
  return row('migrations', 'pass', `all ${known.length} applied`);
}

async function checkSamlCertificates(c: Client): Promise<Check> {
  const present = (await c.query<{ present: boolean }>(`SELECT to_regclass('saml_sp_keys') IS NOT NULL AS present`)).rows[0].present;
  if (!present) return row('SAML SP certificates', 'skip', 'no saml_sp_keys table yet (migrations pending)');
  await c.query('BEGIN READ ONLY');
  let certs: { provider_id: string; certificate: string }[];
  try {
    // Row-level security covers the owner too (FORCE); the system scope reads every tenant's keys.
    await c.query(`SET LOCAL app.scope = 'system'`);
    certs = (await c.query<{ provider_id: string; certificate: string }>(`SELECT provider_id, certificate FROM saml_sp_keys WHERE retires_at IS NULL`)).rows;
  } finally {
    await c.query('ROLLBACK');
  }
  if (!certs.length) return row('SAML SP certificates', 'pass', 'no SAML provider has a signing certificate yet');
  const soon = Date.now() + CERT_WARN_DAYS * 86_400_000;
  const ends = certs.map((k) => ({ provider: k.provider_id, end: Date.parse(new X509Certificate(k.certificate).validTo) }));
  const expired = ends.filter((e) => e.end <= Date.now());
  const expiring = ends.filter((e) => e.end > Date.now() && e.end <= soon);
  const first = Math.min(...ends.map((e) => e.end));
  if (expired.length) return row('SAML SP certificates', 'fail', `${expired.length} expired (provider ${expired[0].provider})`, 'rotate the SP key of each (docs/sso-saml.md) and give the IdPs the new certificate');
  if (expiring.length) return row('SAML SP certificates', 'warn', `${expiring.length} end within ${CERT_WARN_DAYS} days (first ${new Date(first).toISOString().slice(0, 10)}, provider ${expiring[0].provider})`, 'rotate the SP key (docs/sso-saml.md) and give the IdPs the new certificate before it ends');
  return row('SAML SP certificates', 'pass', `${certs.length} current, the first to end on ${new Date(first).toISOString().slice(0, 10)}`);
}

/** The request role's URL as a start would use it, without deriving or changing anything. */
function requestTarget(config: AppConfig, owner?: DatabaseTarget): { target?: DatabaseTarget; skip?: Check } {
  if (config.databaseAppUrl) return { target: { setting: 'DATABASE_APP_URL', url: config.databaseAppUrl, role: 'the request role' } };
  if (config.isProduction) return { skip: row('request role', 'fail', 'DATABASE_APP_URL is unset', 'set DATABASE_APP_URL to a login role created NOSUPERUSER NOBYPASSRLS (README, Docker / production)') };
  const password = readDevSecret(config.dataDir, 'DATABASE_APP_PASSWORD');
  if (!owner || !password) return { skip: row('request role', 'skip', `DATABASE_APP_URL is unset and no start has derived ${APP_ROLE}'s development password yet`) };
  const url = new URL(owner.url);
  url.username = APP_ROLE;
  url.password = encodeURIComponent(password);
  return { target: { setting: 'the request role derived from DATABASE_URL (DATABASE_APP_URL unset)', url: url.toString(), role: 'the request role' } };
}

async function checkRequestRole(config: AppConfig, target: DatabaseTarget): Promise<Check[]> {
  try {
    return await withClient({ connectionString: target.url }, async (c) => {
      const [role] = (await c.query<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; port: number | null }>(
        `SELECT rolname, rolsuper, rolbypassrls, inet_server_port() AS port FROM pg_roles WHERE rolname = current_user`,
      )).rows;
      const roleRow = role.rolsuper || role.rolbypassrls
        ? row('request role', 'fail', `${role.rolname} is ${role.rolsuper ? 'a superuser' : 'allowed to bypass row-level security'}: every tenant's rows would be visible`, `point ${target.setting} at a login role created NOSUPERUSER NOBYPASSRLS IN ROLE ${APP_ROLE}`)
        : row('request role', 'pass', `${role.rolname}: no superuser, no BYPASSRLS (${printableUrl(target.url)})`);
      return [roleRow, await checkPooler(config, target, role.port)];
    });
  } catch (err) {
    return [connectionRow('request role', err, target)];
  }
}

/**
 * Whether DATABASE_APP_URL goes through a pooler, and if so whether it pools by transaction: the
 * server's own port differs from the URL's when something sits between. Transaction pooling shows
 * when a second client is served by the server connection a first, still connected, client used
 * for its last transaction; session pooling never lends it while that client stays.
 */
async function checkPooler(config: AppConfig, target: DatabaseTarget, serverPort: number | null): Promise<Check> {
  const urlPort = Number(new URL(target.url).port || 5432);
  if (serverPort === null || serverPort === urlPort) {
    return row('connection pooler', 'pass', `none: the request role connects straight to PostgreSQL (port ${urlPort})`);
  }
  const pids = await withClient({ connectionString: target.url }, async (first) => {
    const a = (await first.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const b = await withClient({ connectionString: target.url }, async (second) => (await second.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    return { a, b };
  });
  const prepared = config.databasePreparedStatements ? '; DATABASE_PREPARED_STATEMENTS=true needs PgBouncer 1.21+ with max_prepared_statements set' : '';
  if (pids.a === pids.b) return row('connection pooler', 'pass', `on port ${urlPort} (PostgreSQL on ${serverPort}), pooling by transaction${prepared}`);
  return row(
    'connection pooler',
    'warn',
    `on port ${urlPort} (PostgreSQL on ${serverPort}); two clients in turn got different server connections, so transaction pooling was not shown`,
    'set pool_mode = transaction for this database in the pooler (session pooling holds a server connection per client; docs/scaling.md)',
  );
}

async function checkSmtp(url: string): Promise<Check> {
  const transport = createTransport({ url, connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS });
  try {
    await transport.verify();
    return row('SMTP', 'pass', `answers at ${printableUrl(url)}`);
  } catch (e) {
    return row('SMTP', 'fail', `${printableUrl(url)}: ${(e as Error).message}`, 'correct SMTP_URL or start the mail server: invitations, resets and sign-in notices are not sent');
  } finally {
    transport.close();
  }
}

async function checkPushGateway(url: string): Promise<Check> {
  try {
    // Any HTTP answer means it is there; HEAD asks for nothing to be done.
    const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(TIMEOUT_MS) });
    return row('push gateway', 'pass', `answers at ${printableUrl(url)} (HTTP ${res.status})`);
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return row('push gateway', 'fail', `${printableUrl(url)}: ${cause?.code ?? cause?.message ?? (e as Error).message}`, 'correct PUSH_GATEWAY_URL or start the gateway: approvers get no push, pushes wait in the outbox');
  }
}

function checkPublicUrl(config: AppConfig): Check {
  const url = new URL(config.publicUrl);
  const callbacks = `IdPs must have been given ${config.publicUrl}/api/v1/… as their redirect and ACS addresses`;
  if (config.isProduction && url.protocol !== 'https:') return row('PUBLIC_URL', 'fail', `${config.publicUrl} is not https`, 'set PUBLIC_URL to the https address users reach (sign-in cookies are Secure, IdPs refuse http)');
  if (url.pathname !== '/' || url.search) return row('PUBLIC_URL', 'warn', `${config.publicUrl} has a path or query; ${callbacks}`, 'use the origin users reach, with no path');
  if (config.isProduction && /^(localhost|127\.|\[::1\])/.test(url.host)) return row('PUBLIC_URL', 'fail', `${config.publicUrl} is a loopback address`, 'set PUBLIC_URL to the address users and IdPs reach');
  return row('PUBLIC_URL', 'pass', `${config.publicUrl}; ${callbacks}`);
}

/** Whether PORT is free on this machine; a bind that is closed at once changes nothing. */
function checkPort(port: number): Promise<Check> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) =>
      resolve(
        e.code === 'EADDRINUSE'
          ? row('PORT', 'warn', `${port} is in use on this machine`, `a start here fails unless that is this service already running; stop it or choose another PORT`)
          : row('PORT', 'fail', `${port} cannot be opened: ${e.message}`, 'use a port from 1024 up'),
      ),
    );
    srv.listen(port, () => srv.close(() => resolve(row('PORT', 'pass', `${port} is free`))));
  });
}

/** Every check against the environment `env`; nothing is written anywhere. */
export async function runDoctor(env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const checks: Check[] = [];
  let config: AppConfig;
  try {
    config = loadConfig(env, { readOnly: true });
  } catch (e) {
    const message = (e as Error).message.replace(/^Invalid configuration:\n/, '').split('\n').map((l) => l.replace(/^\s*- /, '')).join('; ');
    checks.push(row('configuration', 'fail', message, e instanceof ConfigError ? 'correct the settings named; docs/operations.md lists them' : ''));
    return { ok: false, checks };
  }
  checks.push(row('configuration', 'pass', `NODE_ENV=${config.nodeEnv}, every setting valid`));
  checks.push(checkPublicUrl(config));
  checks.push(await checkPort(config.port));
  const owner = ownerTarget(config);
  let ownerReachable = false;
  if (owner.target) {
    const r = await checkOwner(config, owner.target);
    checks.push(...r.rows);
    ownerReachable = r.reachable;
  } else if (owner.skip) {
    checks.push(owner.skip);
  }
  const request = requestTarget(config, owner.target);
  if (request.target && (ownerReachable || config.databaseAppUrl)) checks.push(...(await checkRequestRole(config, request.target)));
  else if (request.skip) checks.push(request.skip);
  if (config.redisUrl) {
    const problem = await probeRedis(config.redisUrl, TIMEOUT_MS);
    checks.push(
      problem
        ? row('Redis', 'fail', `${printableUrl(config.redisUrl)}: ${problem}`, 'start Redis or correct REDIS_URL; the service would start, counting rate limits per instance until Redis answers')
        : row('Redis', 'pass', `answers at ${printableUrl(config.redisUrl)}`),
    );
  } else {
    checks.push(row('Redis', 'skip', 'REDIS_URL is unset: rate limits are counted per instance (fine for one instance)'));
  }
  checks.push(config.smtpUrl ? await checkSmtp(config.smtpUrl) : row('SMTP', 'skip', 'SMTP_URL is unset: mail is written to the log instead of sent'));
  checks.push(config.pushGatewayUrl ? await checkPushGateway(config.pushGatewayUrl) : row('push gateway', 'skip', 'PUSH_GATEWAY_URL is unset: approval pushes are written to the log'));
  return { ok: !checks.some((c) => c.result === 'fail'), checks };
}

/** The report as a table: check, result, and what was found with what to do. */
export function formatTable(report: DoctorReport): string {
  const widths = [Math.max(5, ...report.checks.map((c) => c.check.length)), 6];
  const lines = [`${'CHECK'.padEnd(widths[0])}  ${'RESULT'.padEnd(widths[1])}  DETAIL / WHAT TO DO`];
  for (const c of report.checks) {
    lines.push(`${c.check.padEnd(widths[0])}  ${c.result.toUpperCase().padEnd(widths[1])}  ${c.detail}`);
    if (c.todo) lines.push(`${''.padEnd(widths[0] + widths[1] + 4)}→ ${c.todo}`);
  }
  const failed = report.checks.filter((c) => c.result === 'fail').length;
  lines.push('', report.ok ? 'Every check passed.' : `${failed} check(s) failed.`);
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write('Usage: npm run doctor [-- --json]\nChecks the configured environment without changing anything; exits 1 when a check fails.\n');
    return;
  }
  const report = await runDoctor();
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatTable(report));
  process.exitCode = report.ok ? 0 : 1;
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err instanceof StartFailure ? err.message : `doctor failed: ${err instanceof Error ? err.message : String(err)}`}\n`);
    process.exit(2);
  });
}
