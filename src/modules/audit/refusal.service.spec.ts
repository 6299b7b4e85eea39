import type { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import type { AuditEntry, AuditService } from './audit.service';
import { refuse, RefusalService } from './refusal.service';

/** A transaction that logs what it did: statements, and whether it committed or rolled back. */
function fakeTransactions() {
  const log: string[] = [];
  const tx = {
    withSystemContext: async (_reason: string, fn: () => Promise<unknown>) => {
      log.push('begin');
      try {
        const result = await fn();
        log.push('commit');
        return result;
      } catch (error) {
        log.push('rollback');
        throw error;
      }
    },
  } as unknown as TenantTransactionService;
  const audit = { record: async (entry: AuditEntry) => void log.push(`audit ${entry.action}`) } as unknown as AuditService;
  return { log, refusals: new RefusalService(tx, audit) };
}

describe('RefusalService', () => {
  const answer = new Error('refused');

  it('rolls the work back, then records the audit row in a transaction of its own, then throws the answer', async () => {
    const { log, refusals } = fakeTransactions();
    const run = refusals.withSystemContext('test', async () => {
      log.push('work');
      refuse(answer, { audit: { action: 'thing.refused' } });
    });
    await expect(run).rejects.toBe(answer);
    expect(log).toEqual(['begin', 'work', 'rollback', 'begin', 'audit thing.refused', 'commit']);
  });

  it('commits the work and the audit row together when the refusal keeps its work, then throws the answer', async () => {
    const { log, refusals } = fakeTransactions();
    const run = refusals.withSystemContext('test', async () => {
      log.push('work');
      refuse(answer, { keepWork: true, audit: { action: 'thing.refused' } });
    });
    await expect(run).rejects.toBe(answer);
    expect(log).toEqual(['begin', 'work', 'audit thing.refused', 'commit']);
  });

  it('lets any other error through untouched, with nothing audited', async () => {
    const { log, refusals } = fakeTransactions();
    const failure = new Error('boom');
    await expect(
      refusals.withSystemContext('test', async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(log).toEqual(['begin', 'rollback']);
  });

  it('answers the result of work that is not refused', async () => {
    const { refusals } = fakeTransactions();
    await expect(refusals.withSystemContext('test', async () => 42)).resolves.toBe(42);
  });
});
