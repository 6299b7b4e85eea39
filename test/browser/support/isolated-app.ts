import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import { createApp } from '../../../src/bootstrap';
import { AppConfig, loadConfig } from '../../../src/infra/config/app-config';
import { ensureDatabase, migrate } from '../../../src/infra/database/migrate';
import { SeedService } from '../../../src/seed/seed.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { AuthRepository } from '../../../src/modules/auth/auth.repository';
import { SessionService } from '../../../src/modules/auth/session.service';
import type { Fixture, FixtureIds } from '../../../src/seed/fixture.types';

export interface IsolatedApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** `http://127.0.0.1:<port>`, also the app's PUBLIC_URL, so SSO redirects come back to it. */
  baseUrl: string;
  /** Owner connection of the app's own database, for asserting or arranging what is stored. */
  ownerUrl: string;
  seed(f: Fixture): Promise<FixtureIds>;
  /** Mints an access token for a seeded user without the password step, as startTestApp does. */
  token(userId: string, opts?: { mfa?: boolean }): Promise<string>;
  ownerQuery<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Stops the app and drops its database. */
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function withAdmin<T>(ownerUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * The full application listening on a real port, on a database of its own. The shared test
 * database holds the partners of every test file, so a rule that depends on how many partners
 * exist ("exactly one partner": spec 1.6.2, 1.9.2) can only be seen holding on a fresh one.
 */
export async function startIsolatedApp(env: Record<string, string | undefined> = {}): Promise<IsolatedApp> {
  const base = new URL(process.env.DATABASE_URL as string);
  base.pathname = `/rmm_iso_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const ownerUrl = base.toString();
  await ensureDatabase(ownerUrl);
  const appUrl = await migrate(ownerUrl);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({ ...process.env, DATABASE_URL: ownerUrl, DATABASE_APP_URL: appUrl, PUBLIC_URL: baseUrl, ...env });
  const app = await createApp(config, appUrl, { logs: false });
  await app.listen(port, '127.0.0.1');
  return {
    app,
    config,
    baseUrl,
    ownerUrl,
    seed: (f) => app.get(SeedService).load(f),
    token: async (userId, o = {}) => {
      const repo = app.get(AuthRepository);
      const pair = await app.get(TenantTransactionService).withSystemContext('tests mint sessions for seeded users', async () => {
        const scope = await repo.loginScope(userId);
        if (!scope) throw new Error(`User ${userId} has no membership`);
        return (await app.get(SessionService).open({ userId, scope: scope.scope, orgId: scope.org_id, partnerId: scope.partner_id, mfa: o.mfa ?? false, authMethod: 'password' })).pair;
      });
      return pair.accessToken;
    },
    ownerQuery: (sql, params = []) => withAdmin(ownerUrl, async (c) => (await c.query(sql, params)).rows),
    close: async () => {
      await app.close();
      const admin = new URL(ownerUrl);
      const name = admin.pathname.slice(1);
      admin.pathname = '/postgres';
      await withAdmin(admin.toString(), (c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`));
    },
  };
}
