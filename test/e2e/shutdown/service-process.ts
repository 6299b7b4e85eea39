/**
 * The service as an operator runs it (src/main.ts, through ts-node), in a child process on a free
 * port, against a database of its own on the test run's server (main.ts migrates it and seeds the
 * demo tenant, which must not land in the run's shared database). Signals are real signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import type { Fixture } from '../../../src/seed/fixture.types';
import { TS_NODE_FLAGS } from '../../support/ts-node-child';

const ROOT = join(__dirname, '../../..');

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** Everything the process wrote (standard output and error). */
  output(): string;
  /** Resolves with the exit code (null when a signal ended it) and when it exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** A database for one file, named after the run's; dropped by `drop`. */
export function scratchDatabase(): { ownerUrl: string; appUrl: string; query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>; drop(): Promise<void> } {
  const owner = new URL(process.env.DATABASE_URL as string);
  const name = `${owner.pathname.slice(1)}_shutdown_${randomBytes(3).toString('hex')}`;
  owner.pathname = `/${name}`;
  const app = new URL(process.env.DATABASE_APP_URL as string);
  app.pathname = `/${name}`;
  const ownerUrl = owner.toString();
  const run = async <T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
  return {
    ownerUrl,
    appUrl: app.toString(),
    query: (sql, params) => run(ownerUrl, sql, params),
    drop: async () => {
      const admin = new URL(ownerUrl);
      admin.pathname = '/postgres';
      await run(admin.toString(), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

/** Starts src/main.ts and resolves once /health/ready answers 200. */
export async function startService(db: { ownerUrl: string; appUrl: string }, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'rmm-shutdown-data-'));
  const child = spawn(process.execPath, [...TS_NODE_FLAGS, join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      START_JOBS: 'true',
      PORT: String(port),
      DATABASE_URL: db.ownerUrl,
      DATABASE_APP_URL: db.appUrl,
      DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => {
      rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, signal, at: Date.now() });
    }),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode} before it was ready:\n${out.slice(-4000)}`);
    const status = await send({ port, method: 'GET', path: '/api/v1/health/ready' }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() - started > 150_000) {
      child.kill('SIGKILL');
      throw new Error(`the service did not become ready:\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, baseUrl, port, output: () => out, exited };
}

/** The demo device's agent, as main.ts seeds it. */
export function demoAgent(): { id: string; token: string } {
  const fixture = JSON.parse(readFileSync(join(ROOT, 'src/seed/demo.json'), 'utf8')) as Fixture;
  const device = (fixture.devices ?? []).find((d) => d.agentId && d.agentToken);
  if (!device) throw new Error('the demo fixture has no enrolled device');
  return { id: device.agentId!, token: device.agentToken! };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request (optionally on a keep-alive agent); rejects on a connection error. */
export function send(o: { port: number; method: string; path: string; headers?: Record<string, string>; body?: string; agent?: Agent }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: o.port, method: o.method, path: o.path, headers: o.headers, agent: o.agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}
