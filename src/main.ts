// First: when an OTLP endpoint is configured, tracing must patch Express and pg before they load.
import './infra/tracing/tracing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import pino from 'pino';
import { createApp, prepareDatabase } from './bootstrap';
import { debugRequested, loadConfig } from './infra/config/app-config';
import { statementMode } from './infra/database/db.service';
import { SeedService } from './seed/seed.service';
import type { Fixture } from './seed/fixture.types';
import type { EmbeddedDatabase } from './infra/database/embedded-postgres';
import { probeRedis, redisUnreachableWarning } from './infra/startup/probes';
import { listenFailure, startFailureText } from './infra/startup/start-failure';
import { installGracefulShutdown } from './shutdown';

/**
 * Prints the start-up banner after every log line written so far. Start-up logs go through an
 * asynchronous stream (the logger used outside requests), so a plain console.log would overtake
 * the lines still queued in it; when that stream writes to standard output, the banner is queued
 * behind them in the same stream.
 */
async function printLast(app: INestApplication, text: string): Promise<void> {
  const logger = await app.resolve(PinoLogger).then((l) => l.logger, () => undefined);
  const stream = (logger as unknown as Record<symbol, unknown> | undefined)?.[pino.symbols.streamSym] as { fd?: unknown; write?: (s: string) => unknown } | undefined;
  if (stream && stream.fd === 1 && typeof stream.write === 'function') stream.write(text);
  else process.stdout.write(text);
}

/**
 * A production start on a database that a development start seeded: the demo tenant's sign-ins, TOTP
 * secret and agent tokens are published (README, demo.json), so anyone could use them there.
 */
async function refuseDemoTenant(app: INestApplication, fixture: Fixture): Promise<void> {
  const held = await app.get(SeedService).heldCredentials(fixture);
  if (!held.length) return;
  throw new Error(
    [
      'Refusing to start: this database holds the demo tenant, whose credentials are published (README, demo.json):',
      ...held.map((line) => `  - ${line}`),
      'Every start without NODE_ENV=production loads it. Start production on a fresh database (its first administrator',
      'comes from npm run bootstrap:admin), or remove these accounts and agents from this one as docs/operations.md',
      'shows ("Demo data and production") and start again.',
    ].join('\n'),
  );
}

/** The embedded PostgreSQL of this start, once it runs: a failed or interrupted start stops it before exiting. */
let embedded: EmbeddedDatabase | null = null;

/**
 * SIGINT or SIGTERM before the service listens (the graceful stop takes over from then): stop the
 * embedded PostgreSQL and exit with 128 + the signal's number, as the graceful stop does.
 */
function stopDuringStart(signal: NodeJS.Signals): void {
  console.error(`${signal} during the start: stopping${embedded ? ' the embedded PostgreSQL' : ''}`);
  void Promise.resolve(embedded?.stop()).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
}

async function main(): Promise<void> {
  process.on('SIGINT', stopDuringStart).on('SIGTERM', stopDuringStart);
  const config = loadConfig();
  const db = await prepareDatabase(config, { callerHandlesSignals: true });
  embedded = db.embedded;
  if (config.redisUrl) {
    const problem = await probeRedis(config.redisUrl);
    if (problem) console.warn(redisUnreachableWarning(config.redisUrl, problem));
  }
  const app = await createApp({ ...config, databaseUrl: db.ownerUrl }, db.appUrl);
  const fixture = JSON.parse(readFileSync(join(__dirname, 'seed/demo.json'), 'utf8')) as Fixture;
  const demo = !config.isProduction;
  let demoAgent: NonNullable<Fixture['devices']>[number] | undefined;
  if (demo) {
    await app.get(SeedService).load(fixture);
    demoAgent = fixture.devices?.find((d) => d.agentId && d.agentToken);
  } else {
    await refuseDemoTenant(app, fixture);
  }
  await app.listen(config.port).catch((err) => {
    throw listenFailure(err, config.port);
  });
  process.off('SIGINT', stopDuringStart).off('SIGTERM', stopDuringStart);
  installGracefulShutdown(app, {
    graceMs: config.shutdownGraceMs,
    listenMs: config.shutdownListenMs,
    afterClose: async () => {
      await db.embedded?.stop();
    },
  });
  const base = `http://localhost:${config.port}`;
  const lines = [
    '',
    `  Service:  ${base}/api/v1  (${db.embedded ? 'embedded PostgreSQL in ' + config.dataDir : 'DATABASE_URL'})`,
    `  Database: ${statementMode(config)}`,
    `  API docs: ${base}/api/docs`,
    `  Login:    ${base}/login`,
  ];
  if (demo) {
    lines.push(
      '  Demo technician: admin@demo-msp.example / demo-password-123  (TOTP secret JBSWY3DPEHPK3PXP)',
      '  Demo customer:   owner@contoso-dental.example / demo-password-123',
    );
    if (demoAgent) {
      lines.push(
        `  Demo agent:      ${demoAgent.hostname}, agent id ${demoAgent.agentId}, token ${demoAgent.agentToken}`,
        config.pamActuatorEnabled
          ? '                   npm run agent:simulate  (prompts from this device: ingest, approval, actuation)'
          : '                   npm run agent:simulate  (prompts from this device; start with PAM_ACTUATOR_ENABLED=true to see approvals actuated)',
      );
    }
  }
  await printLast(app, lines.join('\n') + '\n\n');
}

main().catch(async (err) => {
  process.stderr.write(startFailureText(err, debugRequested()));
  await embedded?.stop().catch(() => undefined);
  process.exit(1);
});
