import { Controller, type CallHandler, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { RequestContext } from '../../infra/context/request-context';
import { lastValueFrom, of } from 'rxjs';
import type { DbService } from '../../infra/database/db.service';
import type { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { NoRequestTransaction } from '../decorators/no-request-transaction.decorator';
import { ANONYMOUS } from '../principal';
import { TenantContextInterceptor } from './tenant-context.interceptor';

@Controller()
class MixedController {
  inTransaction(): void {}
  @NoRequestTransaction()
  ownTransactions(): void {}
}

@NoRequestTransaction()
@Controller()
class OwnTransactionsController {
  anyRoute(): void {}
}

/** What the interceptor is given for a GET of `handler` on `cls`, and what it did. */
async function intercept(cls: Function, handler: Function): Promise<{ transactions: number; principalSet: boolean; answer: unknown }> {
  let transactions = 0;
  let principalSet = false;
  const tx = { run: async (_scope: unknown, fn: () => Promise<unknown>) => (transactions++, fn()) } as unknown as TenantTransactionService;
  const context = { isActive: () => true, set: () => (principalSet = true) } as unknown as RequestContext;
  const db = { one: async () => ({ live: true }) } as unknown as DbService;
  const ctx = {
    getType: () => 'http',
    getHandler: () => handler,
    getClass: () => cls,
    switchToHttp: () => ({ getRequest: () => ({ method: 'GET', principal: ANONYMOUS }) }),
  } as unknown as ExecutionContext;
  const next: CallHandler = { handle: () => of('answer') };
  const answer = await lastValueFrom(new TenantContextInterceptor(tx, context, db, new Reflector()).intercept(ctx, next));
  return { transactions, principalSet, answer };
}

describe('TenantContextInterceptor', () => {
  it('runs an undecorated handler in one request transaction', async () => {
    expect(await intercept(MixedController, MixedController.prototype.inTransaction)).toEqual({ transactions: 1, principalSet: true, answer: 'answer' });
  });

  it('opens no transaction for a handler marked @NoRequestTransaction, and still puts the principal in the request context', async () => {
    expect(await intercept(MixedController, MixedController.prototype.ownTransactions)).toEqual({ transactions: 0, principalSet: true, answer: 'answer' });
  });

  it('opens no transaction for any handler of a controller marked @NoRequestTransaction', async () => {
    expect(await intercept(OwnTransactionsController, OwnTransactionsController.prototype.anyRoute)).toEqual({ transactions: 0, principalSet: true, answer: 'answer' });
  });
});
