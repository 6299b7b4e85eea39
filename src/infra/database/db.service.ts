import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { EntityManager, EntityTarget, ObjectLiteral, Repository } from 'typeorm';

/**
 * What repositories use to reach PostgreSQL: always the current request's (or job's)
 * transaction, so row-level-security settings apply. Outside a transaction the queries run
 * with no tenant settings and see nothing.
 */
@Injectable()
export class Db {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  get manager(): EntityManager {
    return this.txHost.tx;
  }

  repo<T extends ObjectLiteral>(entity: EntityTarget<T>): Repository<T> {
    return this.txHost.tx.getRepository(entity);
  }

  async rows<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.run(text, params)).records as T[];
  }

  async one<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T | null> {
    return ((await this.run(text, params)).records as T[])[0] ?? null;
  }

  /** Number of rows the statement affected. */
  async exec(text: string, params: unknown[] = []): Promise<number> {
    return (await this.run(text, params)).affected ?? 0;
  }

  private async run(text: string, params: unknown[]) {
    const em = this.txHost.tx;
    const own = !em.queryRunner;
    const qr = em.queryRunner ?? em.connection.createQueryRunner();
    try {
      return await qr.query(text, params, true);
    } finally {
      if (own) await qr.release();
    }
  }
}
