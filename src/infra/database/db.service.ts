import { Inject, Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { PoolClient } from 'pg';
import { QueryFailedError, QueryRunnerAlreadyReleasedError, type EntityManager, type EntityTarget, type ObjectLiteral, type QueryRunner, type Repository } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/**
 * A statement of a hot path, declared once with constant text. How it runs depends on
 * DATABASE_PREPARED_STATEMENTS (see statementMode):
 * - off (the default): as an unnamed statement, parsed and planned on each execution. Correct
 *   whatever sits between the service and PostgreSQL, a transaction pooler included. The hottest
 *   statements are calls of PL/pgSQL functions, whose plans the server caches per connection
 *   anyway, so what remains to plan on each call is trivial.
 * - on: as a statement PostgreSQL prepares once per connection under this name and then executes
 *   without parsing or planning it again (after its first executions the server settles on a
 *   generic plan when that is no worse). Only where each client connection is a server
 *   connection: directly to PostgreSQL, or PgBouncer 1.21+ with max_prepared_statements.
 * The text must be a constant: every distinct name stays prepared on every pooled connection for
 * the connection's life.
 */
export interface PreparedSql {
  readonly name: string;
  readonly text: string;
}

const names = new Map<string, string>();

/** Declares a prepared statement; call it once, at module level, with constant text. */
export function prepared(name: string, text: string): PreparedSql {
  const known = names.get(name);
  if (known !== undefined && known !== text) throw new Error(`Two prepared statements are named ${name}`);
  names.set(name, text);
  return Object.freeze({ name, text });
}

/** The start-up log line naming the statement mode in force. */
export function statementMode(config: Pick<AppConfig, 'databasePreparedStatements'>): string {
  return config.databasePreparedStatements
    ? 'named prepared statements (DATABASE_PREPARED_STATEMENTS=true): requires a direct PostgreSQL connection or PgBouncer 1.21+ with max_prepared_statements; not safe behind older transaction poolers'
    : 'unnamed statements (DATABASE_PREPARED_STATEMENTS=false, the default): safe behind any transaction pooler; hot paths run as PL/pgSQL functions with plans cached by the server';
}

type Sql = string | PreparedSql;

/**
 * What repositories use to reach PostgreSQL: always the current request's (or job's)
 * transaction, so row-level-security settings apply. Outside a transaction the queries run
 * with no tenant settings and see nothing.
 */
@Injectable()
export class Db {
  private readonly named: boolean;

  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.named = config.databasePreparedStatements;
  }

  get manager(): EntityManager {
    return this.txHost.tx;
  }

  repo<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.txHost.tx.getRepository(entity);
  }

  async rows<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T[]> {
    return (await this.run(sql, params)).records as T[];
  }

  async one<T = Record<string, unknown>>(sql: Sql, params: unknown[] = []): Promise<T | null> {
    return ((await this.run(sql, params)).records as T[])[0] ?? null;
  }

  /** Number of rows the statement affected. */
  async exec(sql: Sql, params: unknown[] = []): Promise<number> {
    return (await this.run(sql, params)).affected ?? 0;
  }

  private async run(sql: Sql, params: unknown[]): Promise<{ records: unknown[]; affected?: number }> {
    const em = this.txHost.tx;
    const own = !em.queryRunner;
    const qr = em.queryRunner ?? em.connection.createQueryRunner();
    try {
      if (typeof sql === 'string') return await qr.query(sql, params, true);
      return await this.runPrepared(qr, sql, params);
    } finally {
      if (own) await qr.release();
    }
  }

  /**
   * On the query runner's own pg client, so the statement runs in its transaction; errors as
   * TypeORM reports them. Named only when DATABASE_PREPARED_STATEMENTS is on.
   */
  private async runPrepared(qr: QueryRunner, sql: PreparedSql, params: unknown[]): Promise<{ records: unknown[]; affected?: number }> {
    if (qr.isReleased) throw new QueryRunnerAlreadyReleasedError();
    const client = (await qr.connect()) as PoolClient;
    try {
      const result = await client.query(this.named ? { name: sql.name, text: sql.text, values: params } : { text: sql.text, values: params });
      return { records: result.rows, affected: result.rowCount ?? undefined };
    } catch (e) {
      throw new QueryFailedError(sql.text, params, e as Error);
    }
  }
}
