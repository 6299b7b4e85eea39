import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import type { TenantScope } from '../../infra/database/tenant-scope';
import { AuditEntry, AuditService } from './audit.service';

export interface RefusalOptions {
  /** The audit row of the refusal (never a secret value). */
  audit?: AuditEntry | null;
  /**
   * The work done before the refusal stands: a consumed login session, a spent MFA attempt, a
   * session revoked on refresh-token reuse. By default the work is rolled back and only the
   * audit row is written, in a system-context transaction of its own.
   */
  keepWork?: boolean;
}

/**
 * A refusal decided inside a transaction, thrown with `refuse`. RefusalService settles it: the
 * transaction rolls back (or commits, with `keepWork`), the audit row is recorded either way, and
 * then `answer` is thrown to the caller: an AppException for an API route, a sign-in rejection for
 * a redirect.
 */
export class Refusal extends Error {
  constructor(
    readonly answer: Error,
    readonly options: RefusalOptions,
  ) {
    super(answer.message);
  }
}

export function refuse(answer: Error, options: RefusalOptions = {}): never {
  throw new Refusal(answer, options);
}

/**
 * The one way a refusal is recorded and answered. Run the work through `withSystemContext` or
 * `run` (the TenantTransactionService methods of the same names); a `refuse(...)` inside it is settled
 * after the transaction ends, so its audit row survives the rollback and the caller sees the
 * answer. Work that calls no database step can be settled with `settle`.
 */
@Injectable()
export class RefusalService {
  constructor(
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
  ) {}

  withSystemContext<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    return this.settle(async () => answered(await this.tx.withSystemContext(reason, () => this.keeping(fn))));
  }

  run<T>(scope: TenantScope, fn: () => Promise<T>): Promise<T> {
    return this.settle(async () => answered(await this.tx.run(scope, () => this.keeping(fn))));
  }

  /** Runs fn; a refusal it throws has its audit row recorded in a system-context transaction of its own, then its answer is thrown. */
  async settle<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const entry = error.options.keepWork ? null : error.options.audit;
      if (entry) await this.tx.withSystemContext('the audit row of a refusal whose work was rolled back', () => this.audit.record(entry));
      throw error.answer;
    }
  }

  /** A refusal that keeps its work is recorded inside the transaction and returned out of it, so the transaction commits. */
  private async keeping<T>(fn: () => Promise<T>): Promise<T | Kept> {
    try {
      return await fn();
    } catch (error) {
      if (!(error instanceof Refusal) || !error.options.keepWork) throw error;
      if (error.options.audit) await this.audit.record(error.options.audit);
      return new Kept(error.answer);
    }
  }
}

/** A refusal whose work committed, on its way out of the transaction. */
class Kept {
  constructor(readonly answer: Error) {}
}

function answered<T>(result: T | Kept): T {
  if (result instanceof Kept) throw result.answer;
  return result;
}
