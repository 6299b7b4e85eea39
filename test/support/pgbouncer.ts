import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { withFileLock } from '../../src/infra/fs/file-lock';

export const PGBOUNCER_PATH = '/usr/sbin/pgbouncer';

export type PgBouncerAvailability = { ok: true; path: string; version: string } | { ok: false; reason: string };

let cached: PgBouncerAvailability | null = null;

function version(path: string): string {
  return /PgBouncer\s+(\S+)/.exec(execFileSync(path, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').some((dir) => dir && existsSync(join(dir, command)));
}

/** A lock file shared by the test workers, so two of them never run apt at once. */
function withInstallLock<T>(fn: () => T): T {
  return withFileLock(
    join(tmpdir(), 'rmm-test-pgbouncer-install.lock'),
    { waitMs: 900_000, staleMs: 900_000, pollMs: 250, timeout: (lock) => new Error(`waited 15 minutes for ${lock}`) },
    fn,
  );
}

/**
 * Debian's pgbouncer, installed with apt when it is missing, as the browser tier installs
 * chromium. Only a machine without apt skips the pooled tier (`ok: false`, with the reason);
 * where apt exists and the installation fails, this throws, so the failure is seen.
 */
export function ensurePgBouncer(): PgBouncerAvailability {
  if (cached) return cached;
  if (existsSync(PGBOUNCER_PATH)) return (cached = { ok: true, path: PGBOUNCER_PATH, version: version(PGBOUNCER_PATH) });
  // apt needs root: as another user, through passwordless sudo.
  const asRoot = process.getuid?.() === 0 ? [] : onPath('sudo') ? ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive'] : null;
  if (!onPath('apt-get') || asRoot === null) {
    const why = onPath('apt-get') ? 'apt-get needs root and sudo is unavailable' : 'apt-get is unavailable on this machine';
    return (cached = { ok: false, reason: `pgbouncer is not installed at ${PGBOUNCER_PATH} and ${why}, so the tests through PgBouncer cannot run here` });
  }
  const apt = (args: string[], timeout: number) => {
    const [command, ...rest] = [...asRoot, 'apt-get', ...args];
    execFileSync(command, rest, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: 'pipe', timeout });
  };
  withInstallLock(() => {
    if (existsSync(PGBOUNCER_PATH)) return;
    try {
      apt(['update'], 300_000);
      apt(['install', '-y', '--no-install-recommends', 'pgbouncer'], 600_000);
    } catch (err) {
      const e = err as { message?: string; stderr?: Buffer };
      const detail = (e.stderr?.toString('utf8') || e.message || String(err)).trim().split('\n').slice(-3).join(' ');
      throw new Error(`pgbouncer is not installed at ${PGBOUNCER_PATH} and 'apt-get install pgbouncer' failed: ${detail}`);
    }
  });
  if (!existsSync(PGBOUNCER_PATH)) throw new Error(`'apt-get install pgbouncer' finished but ${PGBOUNCER_PATH} does not exist`);
  return (cached = { ok: true, path: PGBOUNCER_PATH, version: version(PGBOUNCER_PATH) });
}

export interface PgBouncerOptions {
  /** The request role's direct URL (user, password, database); the pooler listens in front of its server. */
  appUrl: string;
  /** Server connections per (database, user): the pool every client transaction waits for. */
  poolSize: number;
  /** How long a client waits for a server connection before PgBouncer answers an error. */
  queryWaitTimeoutSeconds?: number;
}

export interface PgBouncer {
  version: string;
  /** The request role's URL through the pooler. */
  appUrl: string;
  /** The settings PgBouncer runs with (as written to its configuration file). */
  settings: Record<string, string>;
  /** `SHOW <what>` on the admin console (as the stats user). */
  show<T = Record<string, unknown>>(what: 'STATS' | 'POOLS' | 'SERVERS' | 'CLIENTS' | 'CONFIG'): Promise<T[]>;
  /** The last lines of PgBouncer's log, for failure messages. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`pgbouncer exited with ${child.exitCode}: ${log()}`));
      const s = createConnection(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve()));
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`pgbouncer did not listen on ${port} within 20 s: ${log()}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/**
 * PgBouncer in transaction-pooling mode in front of the request role's database, on a free
 * loopback port, with `poolSize` server connections: every client transaction may land on any
 * of them. Clients authenticate with SCRAM-SHA-256 against a userlist holding the request role's
 * password (and a stats user for the admin console); PgBouncer logs in to PostgreSQL with the
 * same password. Runs as `nobody` when the tests run as root (PgBouncer refuses root).
 */
export async function startPgBouncer(opts: PgBouncerOptions): Promise<PgBouncer> {
  const available = ensurePgBouncer();
  if (!available.ok) throw new Error(available.reason);
  const target = new URL(opts.appUrl);
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const database = target.pathname.slice(1);
  const dir = mkdtempSync(join(tmpdir(), 'rmm-pgbouncer-'));
  const port = await freePort();
  const statsPassword = randomBytes(18).toString('base64url');
  const settings: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'scram-sha-256',
    auth_file: join(dir, 'userlist.txt'),
    pool_mode: 'transaction',
    default_pool_size: String(opts.poolSize),
    min_pool_size: '0',
    reserve_pool_size: '0',
    max_db_connections: String(opts.poolSize),
    max_client_conn: '1000',
    // Not run in transaction mode anyway; empty so nothing hides session state between clients.
    server_reset_query: '',
    query_wait_timeout: String(opts.queryWaitTimeoutSeconds ?? 30),
    stats_users: 'pgbouncer_stats',
    logfile: join(dir, 'pgbouncer.log'),
    pidfile: join(dir, 'pgbouncer.pid'),
    log_connections: '0',
    log_disconnections: '0',
  };
  const server = `host=${target.hostname} port=${target.port || '5432'} dbname=${database}`;
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]\n${database} = ${server}\n\n[pgbouncer]\n${Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`,
    { mode: 0o600 },
  );
  writeFileSync(settings.auth_file, `${quote(user)} ${quote(password)}\n${quote('pgbouncer_stats')} ${quote(statsPassword)}\n`, { mode: 0o600 });
  const args = [join(dir, 'pgbouncer.ini')];
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
    for (const f of [dir, join(dir, 'pgbouncer.ini'), settings.auth_file]) chownSync(f, uid, gid);
    chmodSync(dir, 0o700);
    args.unshift('-u', 'nobody');
  }
  const child = spawn(available.path, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-4000)));
  const logTail = (lines = 20) => {
    const file = existsSync(settings.logfile) ? readFileSync(settings.logfile, 'utf8') : '';
    return `${file}\n${stderr}`.trim().split('\n').slice(-lines).join('\n');
  };
  await waitForPort(port, child, logTail);

  const via = new URL(opts.appUrl);
  via.hostname = '127.0.0.1';
  via.port = String(port);
  return {
    version: available.version,
    appUrl: via.toString(),
    settings,
    async show<T>(what: string): Promise<T[]> {
      const admin = new Client({ host: '127.0.0.1', port, user: 'pgbouncer_stats', password: statsPassword, database: 'pgbouncer' });
      await admin.connect();
      try {
        // No parameters: pg sends it with the simple protocol, the only one the admin console speaks.
        return (await admin.query(`SHOW ${what}`)).rows as T[];
      } finally {
        await admin.end();
      }
    },
    logTail,
    async stop(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        // SIGTERM: immediate shutdown (SIGINT would wait for every client to leave).
        child.kill('SIGTERM');
        // The grace timer is cleared once PgBouncer exits: a pending timer would keep the jest worker alive.
        let grace: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((r) => (grace = setTimeout(r, 5000)))]);
        clearTimeout(grace);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
