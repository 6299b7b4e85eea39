import request from 'supertest';
import { Db } from '../../../src/infra/database/db.service';
import { startTestApp, type TestApp } from '../../support/test-app';
import { AgentKit, prompt } from '../agent/agent-kit';

/**
 * What the savepoints of TenantTransaction.within() cost on hot paths: one SAVEPOINT (and one
 * RELEASE) per scope switch inside an open transaction, none where a path opens its own
 * transaction. Caller resolution runs before the request's transaction, so it takes none.
 */
describe('savepoints of scope switches on hot paths', () => {
  let t: TestApp;
  let k: AgentKit;
  let statements: string[];

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
    const db = t.app.get(Db);
    const exec = db.exec.bind(db);
    jest.spyOn(db, 'exec').mockImplementation((sql, params) => {
      if (typeof sql === 'string') statements.push(sql.split(' ')[0]);
      return exec(sql, params);
    });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });
  beforeEach(() => {
    statements = [];
  });

  const count = (word: string) => statements.filter((s) => s === word).length;

  it('takes one savepoint for a prompt that waits for approval (the approver fan-out), released', async () => {
    await k.clearRules('orgA');
    await k.orgConfig('orgA', 'require_approval');
    const res = await k.ingest('deviceA1', prompt({ target_executable_signer: 'Pending Ltd' }));
    expect({ status: res.status, state: res.body.status }).toEqual({ status: 201, state: 'pending' });
    expect({ savepoints: count('SAVEPOINT'), released: count('RELEASE'), rolledBack: count('ROLLBACK') }).toEqual({ savepoints: 1, released: 1, rolledBack: 0 });
  });

  it('takes none for a prompt a rule decides', async () => {
    await k.rule('orgA', { verdict: 'auto_approve', match_signer: 'Trusted Ltd' });
    await k.ingest('deviceA1', prompt({ target_executable_signer: 'Trusted Ltd' })).expect(201);
    statements = [];
    const res = await k.ingest('deviceA1', prompt({ target_executable_signer: 'Trusted Ltd' }));
    expect({ status: res.status, state: res.body.status }).toEqual({ status: 201, state: 'auto_approved' });
    expect(count('SAVEPOINT')).toBe(0);
  });

  it('takes none to resolve a caller, cached or not', async () => {
    const admin = `Bearer ${await t.token(k.ids.adminA, { mfa: true })}`;
    statements = [];
    await request(t.http).get('/api/v1/sites').set('Authorization', admin).expect(200);
    await request(t.http).get('/api/v1/sites').set('Authorization', admin).expect(200);
    await k.settings('deviceA2').expect(200);
    expect(count('SAVEPOINT')).toBe(0);
  });
});
