import type { Server } from 'node:http';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Pool } from 'pg';
import { createApp } from '../../src/bootstrap';
import { loadConfig, AppConfig } from '../../src/infra/config/app-config';
import { SeedService } from '../../src/seed/seed.service';
import { TenantTransactionService } from '../../src/infra/database/tenant-transaction.service';
import { SessionService } from '../../src/modules/auth/session.service';
import { AuthRepository } from '../../src/modules/auth/auth.repository';
import type { Fixture, FixtureIds } from '../../src/seed/fixture.types';

export interface TestApp {
  app: NestExpressApplication;
  http: Server;
  config: AppConfig;
  /** Base URL when started with listen: true. */
  baseUrl: string;
  seed(f: Fixture): Promise<FixtureIds>;
  /** Mints a session for a seeded user without the password step (fast, and no TOTP step reuse). */
  token(userId: string, opts?: { mfa?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** The full application, configured exactly as main.ts does, on the test run's database. */
export async function startTestApp(env: Record<string, string | undefined> = {}, opts: { listen?: boolean } = {}): Promise<TestApp> {
  const config = loadConfig({ ...process.env, ...env });
  const app = await createApp(config, process.env.DATABASE_APP_URL as string, { logs: false });
  let baseUrl = '';
  if (opts.listen) {
    await app.listen(0, '127.0.0.1');
    const addr = app.getHttpServer().address() as { port: number };
    baseUrl = `http://127.0.0.1:${addr.port}`;
  } else {
    await app.init();
  }
  return {
    app,
    http: app.getHttpServer(),
    config,
    baseUrl,
    seed: (f) => app.get(SeedService).load(f),
    token: async (userId, o = {}) => {
      const tx = app.get(TenantTransactionService);
      const repo = app.get(AuthRepository);
      const pair = await tx.withSystemContext('tests mint sessions for seeded users', async () => {
        const scope = await repo.loginScope(userId);
        if (!scope) throw new Error(`User ${userId} has no membership`);
        return (await app.get(SessionService).open({ userId, scope: scope.scope, orgId: scope.org_id, partnerId: scope.partner_id, mfa: o.mfa ?? false, authMethod: 'password' })).pair;
      });
      return pair.accessToken;
    },
    close: () => app.close(),
  };
}

/**
 * The owner connections of this test file, by URL (a file may point DATABASE_URL at a server of its
 * own). A connection per statement cost a PostgreSQL backend's start and exit every time: about
 * 50 ms against under 1 ms on a busy 2-core machine, for each of the tens to hundreds a file sends.
 * Each statement still runs alone, in a transaction of its own, and none of those the tests send
 * leaves session state behind (no SET, no session lock, no LISTEN). Connections idle for a second
 * close, so none outlives its file; an idle one ended by the server (a database dropped with
 * FORCE) leaves the pool instead of being thrown.
 */
const ownerPools = new Map<string, Pool>();

function ownerPool(url: string): Pool {
  let pool = ownerPools.get(url);
  if (!pool) {
    pool = new Pool({ connectionString: url, max: 10, idleTimeoutMillis: 1000, allowExitOnIdle: true });
    pool.on('error', () => undefined);
    ownerPools.set(url, pool);
  }
  return pool;
}

/** A superuser (owner) connection, for asserting what is really stored. */
export async function ownerQuery<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await ownerPool(process.env.DATABASE_URL as string).query(sql, params)).rows as T[];
}
