import type { Pool, PoolClient } from 'pg';
import { Tx } from './db.service';
import { SYSTEM_SCOPE, type TenantScope } from './tenant-scope';

const ORG = '0b9c5a47-3a57-4e38-9a3c-7f0f3c1f6d11';
const ORG_SCOPE: TenantScope = { ...SYSTEM_SCOPE, scope: 'organization', orgIds: [ORG] };

/** A pool of one fake connection that records every message it is sent. */
function fakePool(): { pool: () => Pool; sent: string[]; released: () => number } {
  const sent: string[] = [];
  let released = 0;
  const client = {
    query: async (q: string | { text: string }) => {
      sent.push(typeof q === 'string' ? q : q.text);
      return { rows: [{ one: 1 }], rowCount: 1 };
    },
    on: () => client,
    removeListener: () => client,
    release: () => {
      released += 1;
    },
  } as unknown as PoolClient;
  const pool = { connect: async () => client } as unknown as Pool;
  return { pool: () => pool, sent, released: () => released };
}

describe('Tx in one-statement mode (routes marked @OneStatement)', () => {
  const oneStatement = (pool: () => Pool) => new Tx(pool, ORG_SCOPE, false, true, true);

  it('sends the settings and the statement as one message, with no BEGIN and no COMMIT', async () => {
    const { pool, sent, released } = fakePool();
    const tx = oneStatement(pool);
    await tx.query('SELECT 1 AS one', []);
    await tx.end(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^SELECT set_config\('app\.scope', 'organization', true\).*; SELECT 1 AS one$/s);
    expect(sent[0]).not.toMatch(/BEGIN|COMMIT/);
    expect(released()).toBe(1);
  });

  it('refuses a second statement without sending it, so the mark cannot split a transaction in two', async () => {
    const { pool, sent } = fakePool();
    const tx = oneStatement(pool);
    await tx.query('SELECT 1 AS one', []);
    await expect(tx.query('UPDATE t SET x = 1', [])).rejects.toThrow(/@OneStatement ran a second statement/);
    expect(sent).toHaveLength(1);
    await tx.end(false);
  });

  it('cannot be built as a transaction block', () => {
    expect(() => new Tx(fakePool().pool, ORG_SCOPE, false, false, true)).toThrow(/runs statement-wise/);
  });
});

describe('Tx as a transaction block', () => {
  it('sends BEGIN and the settings with the first statement, any number of statements, and COMMIT at the end', async () => {
    const { pool, sent } = fakePool();
    const tx = new Tx(pool, ORG_SCOPE, false);
    await tx.query('SELECT 1 AS one', []);
    await tx.query('SELECT 2 AS two', []);
    await tx.end(true);
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^BEGIN; SELECT set_config\('app\.scope', 'organization', true\).*; SELECT 1 AS one$/s);
    expect(sent.slice(1)).toEqual(['SELECT 2 AS two', 'COMMIT']);
  });
});
