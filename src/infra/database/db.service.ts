import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { RequestContext } from '../context/request-context';
import type { Pool, PoolClient, QueryResult } from 'pg';
import { DataSource, QueryFailedError, type EntityManager, type EntityTarget, type ObjectLiteral, type QueryRunner, type Repository } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LRUCache } from 'lru-cache';
import { inline, parseTemplate, type SqlTemplate } from './sql-text';
import { scopeStatement, type TenantScope } from './tenant-scope';

/**
 * A statement of a hot path, declared once with constant text. Its placeholders are found once,
 * here, so that the statement can travel in the same message as a transaction's opening
 * (see Tx). How it runs otherwise depends on DATABASE_PREPARED_STATEMENTS (see statementMode):
 * - off (the default): as an unnamed statement, parsed and planned on each execution. Correct
 *   whatever sits between the service and PostgreSQL, a transaction pooler included. The hottest
 *   statements are calls of PL/pgSQL functions, whose plans the server caches per connection
 *   anyway, so what remains to plan on each call is trivial.
 * - on: as a statement PostgreSQL prepares once per connection under this name and then executes
 *   without parsing or planning it again. Only where each client connection is a server
 *   connection: directly to PostgreSQL, or PgBouncer 1.21+ with max_prepared_statements.
 * The text must be a constant: every distinct name stays prepared on every pooled connection for
 * the connection's life.
 */
export interface PreparedSql {
  readonly name: string;
  readonly text: string;
  readonly template: SqlTemplate;
}

const names = new Map<string, string>();

/** Declares a prepared statement; call it once, at module level, with constant text. */
export function prepared(name: string, text: string): PreparedSql {
  const known = names.get(name);
  if (known !== undefined && known !== text) throw new Error(`Two prepared statements are named ${name}`);
  names.set(name, text);
  return Object.freeze({ name, text, template: parseTemplate(text) });
}

/** The start-up log line naming the statement mode in force. */
export function statementMode(config: Pick<AppConfig, 'databasePreparedStatements'>): string {
  return config.databasePreparedStatements
    ? 'named prepared statements (DATABASE_PREPARED_STATEMENTS=true): requires a direct PostgreSQL connection or PgBouncer 1.21+ with max_prepared_statements; not safe behind older transaction poolers'
    : 'unnamed statements (DATABASE_PREPARED_STATEMENTS=false, the default): safe behind any transaction pooler; hot paths run as PL/pgSQL functions with plans cached by the server';
}

export type Sql = string | PreparedSql;

/**
 * Templates of statements given as plain text, so that they too can open a transaction in one
 * message. Texts are code-built (values are always parameters), so there are few of them.
 */
const textTemplates = new LRUCache<string, SqlTemplate | false>({ max: 2000 });

function templateOf(sql: Sql): SqlTemplate | null {
  if (typeof sql !== 'string') return sql.template;
  let template = textTemplates.get(sql);
  if (template === undefined) {
    try {
      template = parseTemplate(sql);
    } catch {
      template = false;
    }
    textTemplates.set(sql, template);
  }
  return template || null;
}

/** The statement as one literal-only text, or null when it must travel with parameters. */
function inlined(sql: Sql, params: unknown[]): string | null {
  const template = templateOf(sql);
  return template ? inline(template, params) : null;
}

interface Outcome {
  records: unknown[];
  affected?: number;
}

/** How a Tx sends its statements: in a transaction block, each alone, or one alone and no more (see Tx). */
export type TxMode = 'transaction' | 'each-statement' | 'one-statement';

/** The request-context key of the transaction in progress (see TenantTransactionService). */
export const CURRENT_TX = 'tenantTx';

/**
 * One tenant transaction on one pooled connection, opened lazily: nothing is sent until its
 * first statement, and then BEGIN, the row-level-security settings and that statement travel in
 * one message (one round trip; the statement's values as literals, sql-text.ts). Scope switches
 * and savepoints (TenantTransactionService.within) are queued the same way and ride on the next
 * statement. A transaction that runs no statement costs nothing and takes no connection.
 *
 * Statement-wise mode (`eachStatement`): no BEGIN; each statement runs as its own implicit
 * transaction in one message with the settings (`SELECT set_config(...); statement`), for
 * lookups whose statements need no common snapshot (principal resolution): one round trip each
 * and no COMMIT. One-statement mode (`oneStatement`, the routes marked @OneStatement) is the same
 * for a request whose whole work is one statement, and refuses a second: that one would not share
 * the first one's snapshot or atomicity.
 */
export class Tx {
  client: PoolClient | null = null;
  /** BEGIN has been sent (the connection is in a transaction block). */
  begun = false;
  /** The scope the server has, as far as this transaction knows (null: none or unknown). */
  applied: TenantScope | null = null;
  /** Statements to send before the next one: savepoints and their releases (TenantTransactionService.within). */
  pending: string[] = [];
  private clientError: Error | null = null;
  private connecting: Promise<PoolClient> | null = null;
  private runner: QueryRunner | null = null;

  constructor(
    private readonly pool: () => Pool,
    /** The scope the next statement must run under. */
    public scope: TenantScope,
    private readonly named: boolean,
    readonly eachStatement = false,
    private readonly oneStatement = false,
  ) {
    if (oneStatement && !eachStatement) throw new Error('a one-statement context runs statement-wise');
  }

  /** Statements sent so far (one-statement mode refuses the second). */
  private statements = 0;

  async query(sql: Sql, params: unknown[]): Promise<Outcome> {
    if (this.oneStatement && this.statements++ > 0) {
      throw new Error('a route marked @OneStatement ran a second statement: remove the mark, or make its work one statement');
    }
    const client = this.client ?? (await this.connect());
    try {
      if (this.eachStatement) return await this.alone(client, sql, params);
      const prefix = this.prefix();
      if (!prefix) return await execute(client, sql, params, this.named);
      // One message: the opening, the queued savepoints, the settings and the statement (unnamed
      // whatever the statement mode: a message with several statements carries no parameters).
      const text = inlined(sql, params);
      if (text !== null) return lastOf(await client.query(`${prefix}; ${text}`));
      await client.query(prefix);
      return await execute(client, sql, params, this.named);
    } catch (e) {
      if (e instanceof QueryFailedError) throw e;
      throw new QueryFailedError(typeof sql === 'string' ? sql : sql.text, params, e as Error);
    }
  }

  /** Statement-wise mode: the statement and its settings as one implicit transaction. */
  private async alone(client: PoolClient, sql: Sql, params: unknown[]): Promise<Outcome> {
    const settings = scopeStatement(this.scope);
    const text = inlined(sql, params);
    if (text !== null) return lastOf(await client.query(`${settings}; ${text}`));
    // A statement with parameters cannot share a message with another: a short transaction of its own.
    await client.query(`BEGIN; ${settings}`);
    try {
      const outcome = await execute(client, sql, params, this.named);
      await client.query('COMMIT');
      return outcome;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }

  /** Sends what is queued (the opening, savepoints, settings) without a statement of its own. */
  async flush(): Promise<void> {
    if (this.eachStatement) return;
    const client = this.client ?? (await this.connect());
    const prefix = this.prefix();
    if (prefix) await client.query(prefix);
  }

  /** Sends statements now, as one message (savepoint handling). */
  async send(statements: string[]): Promise<void> {
    if (!this.client) return;
    await this.client.query(statements.join('; '));
  }

  /**
   * A TypeORM entity manager on this transaction's connection, with everything queued sent
   * first. Ask for it where it is used: a scope switch queued later is sent only by this
   * transaction's own statements.
   */
  async entityManager(dataSource: DataSource): Promise<EntityManager> {
    if (this.eachStatement) throw new Error('entity managers need a transaction; this context runs statement by statement');
    await this.flush();
    if (!this.runner) {
      const runner = dataSource.createQueryRunner();
      // The runner borrows this connection (it never returns it to the pool: it has no release callback).
      (runner as unknown as { databaseConnection: PoolClient }).databaseConnection = this.client as PoolClient;
      (runner as { isTransactionActive: boolean }).isTransactionActive = true;
      this.runner = runner;
    }
    return this.runner.manager;
  }

  /** Ends the transaction (COMMIT or ROLLBACK when one was begun) and returns the connection. */
  async end(commit: boolean): Promise<void> {
    if (this.connecting) await this.connecting.catch(() => undefined);
    const client = this.client;
    if (!client) return;
    this.client = null;
    let broken: Error | null = this.clientError;
    try {
      if (this.begun && !broken) await client.query(commit ? 'COMMIT' : 'ROLLBACK');
    } catch (e) {
      broken = e as Error;
      if (commit) throw new QueryFailedError('COMMIT', [], e as Error);
    } finally {
      this.begun = false;
      this.pending = [];
      if (this.runner) {
        (this.runner as { isTransactionActive: boolean }).isTransactionActive = false;
        await this.runner.release();
        this.runner = null;
      }
      client.removeListener('error', this.onClientError);
      // A connection whose rollback failed is in an unknown state: the pool closes it.
      client.release(broken ?? undefined);
    }
  }

  private readonly onClientError = (e: Error): void => {
    this.clientError = e;
  };

  /** One connection per transaction, even when its first statements are issued at once (Promise.all). */
  private connect(): Promise<PoolClient> {
    this.connecting ??= this.pool()
      .connect()
      .then((client) => {
        client.on('error', this.onClientError);
        this.client = client;
        return client;
      })
      .finally(() => {
        this.connecting = null;
      });
    return this.connecting;
  }

  /** What must precede the next statement, joined into one text, or '' when nothing must. */
  private prefix(): string {
    const parts: string[] = [];
    if (!this.begun) {
      parts.push('BEGIN');
      this.begun = true;
    }
    if (this.pending.length) {
      parts.push(...this.pending);
      this.pending = [];
    }
    if (this.applied !== this.scope) {
      parts.push(scopeStatement(this.scope));
      this.applied = this.scope;
    }
    return parts.join('; ');
  }
}

/** A simple-query message with several statements answers with one result each: the last is the statement's. */
function lastOf(result: QueryResult | QueryResult[]): Outcome {
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  return { records: last.rows, affected: last.rowCount ?? undefined };
}

async function execute(client: PoolClient, sql: Sql, params: unknown[], named: boolean): Promise<Outcome> {
  const result =
    typeof sql === 'string'
      ? await client.query(sql, params)
      : await client.query(named ? { name: sql.name, text: sql.text, values: params } : { text: sql.text, values: params });
  return { records: result.rows, affected: result.rowCount ?? undefined };
}

/**
 * What repositories use to reach PostgreSQL: always the current request's (or job's)
 * transaction, so row-level-security settings apply. Outside a transaction the queries run
 * with no tenant settings and see nothing.
 */
@Injectable()
export class DbService {
  private readonly named: boolean;
  private poolRef: Pool | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cls: RequestContext,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.named = config.databasePreparedStatements;
  }

  /** The request role's connection pool (TypeORM's, so there is one). */
  readonly pool = (): Pool => {
    if (!this.poolRef) this.poolRef = (this.dataSource.driver as unknown as { master: Pool }).master;
    return this.poolRef;
  };

  /**
   * A transaction not yet opened, under `scope`: a transaction block (the default), statement by
   * statement, or one statement only (see Tx).
   */
  newTx(scope: TenantScope, mode: TxMode = 'transaction'): Tx {
    return new Tx(this.pool, scope, this.named, mode !== 'transaction', mode === 'one-statement');
  }

  /** The transaction of the current request or job, if any. */
  currentTx(): Tx | null {
    return (this.cls.isActive() && this.cls.get<Tx | undefined>(CURRENT_TX)) || null;
  }

  /** A TypeORM entity manager on the current transaction (the data source's own outside one). */
  async entityManager(): Promise<EntityManager> {
    const tx = this.currentTx();
    return tx ? tx.entityManager(this.dataSource) : this.dataSource.manager;
  }

  async repo<T extends ObjectLiteral>(entity: EntityTarget<T>): Promise<Repository<T>> {
    return (await this.entityManager()).getRepository(entity);
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

  private async run(sql: Sql, params: unknown[]): Promise<Outcome> {
    const tx = this.currentTx();
    if (tx) return tx.query(sql, params);
    try {
      const pool = this.pool();
      const result = typeof sql === 'string' ? await pool.query(sql, params) : await pool.query({ text: sql.text, values: params });
      return { records: result.rows, affected: result.rowCount ?? undefined };
    } catch (e) {
      throw new QueryFailedError(typeof sql === 'string' ? sql : sql.text, params, e as Error);
    }
  }
}
