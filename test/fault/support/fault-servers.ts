import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { ensureAppRoleLogin } from '../../../src/infra/database/app-role';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import { ensureDatabase, migrate } from '../../../src/infra/database/migrate';
import { TS_NODE_FLAGS } from '../../support/ts-node-child';
import { ensureDebianPackage } from './debian-package';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The embedded PostgreSQL server of a fault test, run by a child process (postgres.child.ts). */
export interface FaultPostgresServer {
  url: string;
  /** PostgreSQL's fast (SIGINT) or immediate (SIGQUIT) shutdown; the data stays. */
  halt(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again, same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function startPostgresChild(dataDir: string): Promise<FaultPostgresServer> {
  const child: ChildProcess = fork(join(__dirname, 'postgres.child.ts'), [dataDir], {
    execArgv: TS_NODE_FLAGS,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((res, rej) => {
    child.once('message', (m: { url: string }) => res(m.url));
    child.once('exit', (code) => rej(new Error(`embedded PostgreSQL exited with ${code}`)));
  });
  const command = (name: string) =>
    new Promise<void>((res, rej) => {
      child.once('message', (m: { done?: string; error?: string }) => (m.error ? rej(new Error(m.error)) : res()));
      child.send(name);
    });
  return {
    url,
    halt: (mode) => command(`halt-${mode}`),
    restart: () => command('restart'),
    stop: async () => {
      if (child.exitCode !== null) return;
      await command('stop').catch(() => undefined);
      child.disconnect();
      await new Promise<void>((res) => (child.exitCode !== null ? res() : child.once('exit', () => res())));
    },
  };
}

/** A PostgreSQL of the test file's own, migrated, that the test may stop and start (never the run's shared server). */
export interface FaultDatabase {
  server: FaultPostgresServer;
  ownerUrl: string;
  appUrl: string;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Points the test harness (startTestApp, ownerQuery) at this server, for the rest of the file. */
  useForTestApps(): void;
  close(): Promise<void>;
}

export async function startFaultDatabase(): Promise<FaultDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'rmm-fault-pg-'));
  let server: FaultPostgresServer | undefined;
  try {
    server = await startPostgresChild(dir);
    const url = new URL(server.url);
    url.pathname = '/rmm_fault';
    const ownerUrl = url.toString();
    await ensureDatabase(ownerUrl);
    // The request role's password is this server's own: nothing else uses the cluster.
    await migrate(ownerUrl, 'set below');
    const appUrl = await ensureAppRoleLogin(ownerUrl, randomBytes(18).toString('base64url'));
    const s = server;
    return {
      server: s,
      ownerUrl,
      appUrl,
      query: async (sql, params = []) => {
        const c = new Client({ connectionString: ownerUrl });
        await c.connect();
        try {
          return (await c.query(sql, params)).rows;
        } finally {
          await c.end();
        }
      },
      useForTestApps: () => {
        process.env.DATABASE_URL = ownerUrl;
        process.env.DATABASE_APP_URL = appUrl;
      },
      close: async () => {
        try {
          await s.stop();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    await server?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export const REDIS_SERVER_PATH = '/usr/bin/redis-server';

/** A redis-server of the test file's own on a free port (never the machine's 6379); stop() and start() again keep the port. */
export interface FaultRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function waitForPort(port: number, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`redis-server exited with ${child.exitCode}`));
      const s = createConnection(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve()));
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server did not listen on ${port}`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

/**
 * Debian's redis-server, installed with apt when missing. Returns the reason instead when it
 * cannot be (no apt): the caller skips with that message.
 */
export async function startFaultRedis(): Promise<FaultRedis | string> {
  const available = ensureDebianPackage('redis-server', REDIS_SERVER_PATH);
  if (!available.ok) return available.reason;
  const port = await freePort();
  let child: ChildProcess | null = null;
  let dir = '';
  const start = async () => {
    // Nothing is saved (no snapshots, no append-only file); the directory is only redis-server's working directory.
    dir = mkdtempSync(join(tmpdir(), 'rmm-fault-redis-'));
    child = spawn(REDIS_SERVER_PATH, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', ''], {
      stdio: 'ignore',
    });
    await waitForPort(port, child);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: async () => {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((res) => {
        c.once('exit', () => res());
        c.kill('SIGKILL');
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
