/**
 * An instance of the service in a child process (instance.main.ts), so that a test can kill it
 * as a machine failure would: SIGKILL, no shutdown hook, no COMMIT, no pg-boss stop. Its request
 * role goes through the test file's PgBouncer like the tier's other instances.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { pgbouncer } from './scale-out.kit';
import { TS_NODE_FLAGS } from '../support/ts-node-child';

const ROOT = join(__dirname, '../..');
/** Booting Nest through ts-node on a busy two-core machine. */
const READY_TIMEOUT_MS = 150_000;

export interface InstanceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process wrote (standard output and error), for failure messages. */
  output(): string;
  /** Resolves once the process has exited, with its exit code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts an instance with the test worker's environment plus `env`; resolves once /health/ready answers 200. */
export async function startInstanceProcess(env: Record<string, string> = {}): Promise<InstanceProcess> {
  const appUrl = pgbouncer().appUrl;
  const port = await freePort();
  const child = spawn(process.execPath, [...TS_NODE_FLAGS, join(__dirname, 'instance.main.ts')], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_APP_URL: appUrl, DATABASE_PREPARED_STATEMENTS: 'false', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const baseUrl = `http://127.0.0.1:${port}`;
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return exited;
  };
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      await closed;
      throw new Error(`the instance exited with ${child.exitCode} before it was ready:\n${out.slice(-4000)}`);
    }
    const status = await readiness(port);
    if (status === 200) break;
    if (Date.now() - started > READY_TIMEOUT_MS) {
      await kill();
      throw new Error(`the instance did not become ready within ${READY_TIMEOUT_MS / 1000} s:\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, baseUrl, output: () => out, exited, kill };
}

/** The status of GET /health/ready, or 0 while nothing listens. */
function readiness(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/api/v1/health/ready', timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}
