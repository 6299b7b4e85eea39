import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');

/**
 * What a fresh Node.js process reports after requiring the tracing module and then, as main.ts goes
 * on to, Express and pg: whether any OpenTelemetry module was loaded, and whether Express's router
 * and pg's client came out patched. A process of its own, since instrumentations patch modules as
 * Node's loader loads them (never as jest's does) and would stay patched in this worker.
 */
function afterTracingModule(env: Record<string, string>): { openTelemetryModules: number; expressPatched: boolean; pgPatched: boolean } {
  const script = `
    require('./src/infra/tracing/tracing');
    const express = require('express');
    const pg = require('pg');
    const openTelemetryModules = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length;
    console.log(JSON.stringify({
      openTelemetryModules,
      expressPatched: typeof express.Router.prototype.route.__wrapped === 'boolean',
      pgPatched: typeof pg.Client.prototype.query.__wrapped === 'boolean',
    }));`;
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const run = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: ROOT,
    env: { ...clean, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`the probe failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!);
}

describe('starting tracing', () => {
  it('is the first thing main.ts imports, so that Express and pg load after it', () => {
    const main = readFileSync(join(ROOT, 'src/main.ts'), 'utf8');
    const firstImport = /^import\s[^;]*;/m.exec(main)?.[0];
    expect(firstImport).toBe("import './infra/tracing/tracing';");
  });

  it('loads nothing of OpenTelemetry and patches nothing when no OTLP endpoint is configured', () => {
    expect(afterTracingModule({})).toEqual({ openTelemetryModules: 0, expressPatched: false, pgPatched: false });
  }, 60_000);

  it('patches Express and pg as they load when OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
    const after = afterTracingModule({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(after).toMatchObject({ expressPatched: true, pgPatched: true });
    expect(after.openTelemetryModules).toBeGreaterThan(0);
  }, 60_000);

  it('starts nothing on a malformed endpoint, which the configuration then refuses', () => {
    expect(afterTracingModule({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toEqual({ openTelemetryModules: 0, expressPatched: false, pgPatched: false });
  }, 60_000);
});
