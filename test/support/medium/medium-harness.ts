import { Test, type TestingModule } from '@nestjs/testing';
import type { DynamicModule, Provider, Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RequestContext, RequestContextModule } from '../../../src/infra/context/request-context';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { PRINCIPAL_KEY } from '../../../src/common/interceptors/tenant-context.interceptor';
import { scopeOf, type Principal } from '../../../src/common/principal';
import { loadConfig, type AppConfig } from '../../../src/infra/config/app-config';
import { ConfigModule } from '../../../src/infra/config/config.module';
import { CryptoModule } from '../../../src/infra/crypto/crypto.module';
import { assertRequestRoleIsRestricted } from '../../../src/infra/database/app-role';
import { DbService } from '../../../src/infra/database/db.service';
import { DatabaseModule } from '../../../src/infra/database/database.module';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { SYSTEM_SCOPE, type TenantScope } from '../../../src/infra/database/tenant-scope';

/**
 * The medium tier: a Nest testing module with the database module and only the providers under
 * test and the TypeORM entities they use, on the run's database through the request role
 * (row-level security applies), with no HTTP server. Calls run in a tenant transaction opened
 * exactly as a request's (TenantTransactionService), as a principal the test names; rows are arranged and
 * checked through an owner connection.
 */
export interface Medium {
  module: TestingModule;
  config: AppConfig;
  /** Superuser connection: arranges fixtures and reads what is really stored, past row-level security. */
  owner: Client;
  get<T>(type: Type<T>): T;
  /**
   * Runs fn in one committed tenant transaction as `principal`. The transaction's first statement
   * travels inlined, with BEGIN and the settings (db.service.ts, Tx); later ones with bound parameters.
   */
  as<T>(principal: TenantScope, fn: () => Promise<T>): Promise<T>;
  /** As `as`, after the transaction has been opened, so that fn's first statement too travels with bound parameters. */
  asOpened<T>(principal: TenantScope, fn: () => Promise<T>): Promise<T>;
  /**
   * Runs fn as a request of `principal` would run: in a transaction scoped to it, with the principal,
   * a request id and a client address in the request context (what services, audit and events read).
   */
  asCaller<T>(principal: Principal, fn: () => Promise<T>, request?: { id?: string; ip?: string }): Promise<T>;
  /** Runs fn as `principal` and rolls its transaction back, so the fixture is left as it was. */
  tryAs<T>(principal: TenantScope, fn: () => Promise<T>): Promise<T>;
  /** Runs fn in system context, in one transaction (what jobs and public routes use). */
  system<T>(fn: () => Promise<T>): Promise<T>;
  /** Runs fn in system context statement by statement, as principal resolution does (TenantTransactionService.withSystemLookup). */
  systemLookup<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Thrown out of the transaction to end it with ROLLBACK, carrying fn's result. */
class Rollback extends Error {
  constructor(readonly value: unknown) {
    super('rolled back on purpose');
  }
}

export interface MediumOptions {
  /**
   * The TypeORM entities the repositories under test read or write (docs/data-access.md): the
   * database module loads only the entities some imported module registered, and `DbService.repo` of an
   * unregistered entity throws. Registered as a feature module would, with `TypeOrmModule.forFeature`.
   */
  entities?: Parameters<typeof TypeOrmModule.forFeature>[0];
  /** Further modules the providers under test depend on. */
  imports?: (Type | DynamicModule)[];
}

export async function startMedium(providers: Provider[], env: Record<string, string> = {}, options: MediumOptions = {}): Promise<Medium> {
  const config = loadConfig({ ...process.env, ...env });
  const module = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(config),
      CryptoModule,
      RequestContextModule,
      DatabaseModule.forRoot(process.env.DATABASE_APP_URL as string, { ...config, databasePoolSize: 4 }),
      ...(options.entities?.length ? [TypeOrmModule.forFeature(options.entities)] : []),
      ...(options.imports ?? []),
    ],
    providers,
  }).compile();
  await module.init();
  // Isolation assertions mean something only through a role that row-level security binds.
  await assertRequestRoleIsRestricted((sql) => module.get(DataSource).query(sql));
  const owner = new Client({ connectionString: process.env.DATABASE_URL });
  await owner.connect();
  const tx = module.get(TenantTransactionService);
  async function tryAs<T>(principal: TenantScope, fn: () => Promise<T>): Promise<T> {
    try {
      await tx.run(principal, async () => {
        throw new Rollback(await fn());
      });
    } catch (e) {
      if (e instanceof Rollback) return e.value as T;
      throw e;
    }
    throw new Error('unreachable: the transaction always rolls back');
  }
  return {
    module,
    config,
    owner,
    get: (type) => module.get(type),
    as: (principal, fn) => tx.run(principal, fn),
    asOpened: (principal, fn) =>
      tx.run(principal, async () => {
        await module.get(DbService).one('SELECT 1');
        return fn();
      }),
    asCaller: (principal, fn, request = {}) =>
      tx.run(scopeOf(principal), () => {
        const cls = module.get(RequestContext);
        cls.set(PRINCIPAL_KEY, principal);
        cls.set('requestId', request.id ?? 'medium-request');
        cls.set('ip', request.ip ?? '192.0.2.1');
        return fn();
      }),
    tryAs,
    system: (fn) => tx.run(SYSTEM_SCOPE, fn),
    systemLookup: (fn) => tx.withSystemLookup('medium-tier test', fn),
    close: async () => {
      await owner.end();
      await module.close();
    },
  };
}

/** An organization member (or an API key of the organization): sees that organization, restricted to `siteIds` when given. */
export function orgPrincipal(orgId: string, opts: { userId?: string; siteIds?: string[] } = {}): TenantScope {
  return { scope: 'organization', orgIds: [orgId], partnerIds: [], userId: opts.userId ?? null, partnerWide: false, siteIds: opts.siteIds ?? null };
}

/** A partner technician reaching `orgIds`; partner-wide when the membership reaches all organizations. */
export function partnerPrincipal(partnerId: string, orgIds: string[], opts: { userId?: string; partnerWide?: boolean; siteIds?: string[] } = {}): TenantScope {
  return { scope: 'partner', orgIds, partnerIds: [partnerId], userId: opts.userId ?? null, partnerWide: opts.partnerWide ?? true, siteIds: opts.siteIds ?? null };
}

/** A caller as the auth guard resolves one: a user of one organization unless told otherwise (all permissions, MFA done). */
export function callerOf(over: Partial<Principal> & Pick<Principal, 'orgIds'>): Principal {
  return {
    kind: 'user',
    userId: null,
    sessionId: null,
    apiKeyId: null,
    scimConnectionId: null,
    scope: 'organization',
    orgId: over.orgIds[0] ?? null,
    partnerId: null,
    partnerIds: [],
    permissions: ['*'],
    mfa: true,
    partnerWide: false,
    allowedSiteIds: null,
    agent: null,
    ...over,
  };
}
