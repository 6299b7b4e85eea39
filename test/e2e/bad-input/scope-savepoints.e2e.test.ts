import request from 'supertest';
import { recordPgMessages, type PgMessages } from '../../support/pg-messages';
import { startTestApp, type TestApp } from '../../support/test-app';
import { AgentKit, prompt } from '../agent/agent-kit';

/**
 * What the savepoints of TenantTransactionService.within() cost on hot paths: one SAVEPOINT per scope
 * switch inside an open transaction, sent in the same message as the switch's first statement;
 * none where a path opens its own transaction. A savepoint released by nothing before COMMIT ends
 * with the transaction, so its RELEASE is never sent. Caller resolution runs before the request's
 * transaction, so it takes none.
 */
describe('savepoints of scope switches on hot paths', () => {
  let t: TestApp;
  let k: AgentKit;
  let pg: PgMessages;
  let statements: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
    pg = recordPgMessages(t.app);
  });
  afterAll(() => t.close());

  const count = (word: string) => statements.filter((s) => s === word).length;
  const record = async <T>(send: () => Promise<T>): Promise<T> => {
    let result: T | undefined;
    statements = pg.words(await pg.during(async () => (result = await send())));
    return result as T;
  };

  it('takes one savepoint for a prompt that waits for approval (the approver fan-out), released', async () => {
    await k.clearRules('orgA');
    await k.orgConfig('orgA', 'require_approval');
    const res = await record(() => k.ingest('deviceA1', prompt({ target_executable_signer: 'Pending Ltd' })));
    expect({ status: res.status, state: res.body.status }).toEqual({ status: 201, state: 'pending' });
    expect({ savepoints: count('SAVEPOINT'), released: count('RELEASE'), rolledBack: count('ROLLBACK'), committed: count('COMMIT') }).toEqual({
      savepoints: 1,
      released: 0,
      rolledBack: 0,
      committed: 1,
    });
  });

  it('takes none for a prompt a rule decides', async () => {
    await k.rule('orgA', { verdict: 'auto_approve', match_signer: 'Trusted Ltd' });
    await k.ingest('deviceA1', prompt({ target_executable_signer: 'Trusted Ltd' })).expect(201);
    const res = await record(() => k.ingest('deviceA1', prompt({ target_executable_signer: 'Trusted Ltd' })));
    expect({ status: res.status, state: res.body.status }).toEqual({ status: 201, state: 'auto_approved' });
    expect(count('SAVEPOINT')).toBe(0);
  });

  it('takes none to resolve a caller, cached or not', async () => {
    const admin = `Bearer ${await t.token(k.ids.adminA, { mfa: true })}`;
    await record(async () => {
      await request(t.http).get('/api/v1/sites').set('Authorization', admin).expect(200);
      await request(t.http).get('/api/v1/sites').set('Authorization', admin).expect(200);
      await k.settings('deviceA2').expect(200);
    });
    expect(count('SAVEPOINT')).toBe(0);
    expect(count('SELECT')).toBeGreaterThan(0);
  });
});
