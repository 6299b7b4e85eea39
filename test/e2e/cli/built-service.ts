/**
 * The service's commands run as an operator runs them: a child process on a clean environment (only
 * PATH and HOME are inherited, so none of the test run's settings leak in), its output kept. They
 * run from the sources through ts-node, as the other cli and shutdown tests do, so a type error in
 * a file being edited elsewhere does not stop them; the tests of `npm start` itself build dist.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withFileLock } from '../../../src/infra/fs/file-lock';
import { TS_NODE_FLAGS } from '../../support/ts-node-child';
import { send } from '../shutdown/service-process';

export const ROOT = join(__dirname, '../../..');

/**
 * Builds dist when a source is newer than it (scripts/build-if-stale.js, what npm start runs first).
 * Files of this run that need dist take the build in turn, under a lock, instead of writing it together.
 */
export function ensureBuilt(): void {
  const lock = join(tmpdir(), `rmm-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`);
  withFileLock(lock, { waitMs: 300_000, staleMs: 300_000, pollMs: 200, timeout: (l) => new Error(`another build held ${l} for 5 minutes`) }, () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build-if-stale.js'), '--quiet'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the build failed:\n${r.stdout}\n${r.stderr}`);
  });
}

/** PATH and HOME, and the settings given: nothing else of the test run's environment. */
export function cleanEnv(settings: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  for (const [k, v] of Object.entries(settings)) if (v !== undefined) env[k] = v;
  return env;
}

export interface Run {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves true once /health/ready on `port` answers 200, false when the process exits first. */
  ready(port: number, timeoutMs?: number): Promise<boolean>;
}

/** `node <script>` for a source file of the service, through ts-node. */
export function source(script: string, ...args: string[]): [string, string[]] {
  return [process.execPath, [...TS_NODE_FLAGS, join(ROOT, script), ...args]];
}

/** Starts a command of the service (the service itself, src/main.ts, by default) in ROOT. */
export function run(env: NodeJS.ProcessEnv, [command, args]: [string, string[]] = source('src/main.ts')): Run {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    output: () => out,
    exited,
    ready: async (port, timeoutMs = 180_000) => {
      const started = Date.now();
      while (child.exitCode === null && child.signalCode === null) {
        if ((await send({ port, method: 'GET', path: '/api/v1/health/ready' }).then((r) => r.status, () => 0)) === 200) return true;
        if (Date.now() - started > timeoutMs) throw new Error(`not ready after ${timeoutMs} ms:\n${out.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      return false;
    },
  };
}

/** Runs to its end (killed after `timeoutMs`) and gives its exit code and output. */
export async function runToExit(env: NodeJS.ProcessEnv, timeoutMs = 120_000, command?: [string, string[]]): Promise<{ code: number | null; output: string }> {
  const r = run(env, command);
  const timer = setTimeout(() => r.child.kill('SIGKILL'), timeoutMs);
  const { code } = await r.exited;
  clearTimeout(timer);
  return { code, output: r.output() };
}

/** Whether a process with this id exists (EPERM: it does, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A line of a stack trace, as Node prints them. */
export const STACK_LINE = /\n\s+at \S/;
