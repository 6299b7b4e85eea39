import request from 'supertest';
import { QueryFailedError } from 'typeorm';
import { DbService } from '../../../src/infra/database/db.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Issue 18, part 2: a NUL character in a criterion of POST /pam/rules/preview was a 500.
 * PostgreSQL refused the NUL, then the scope switch around the preview restored the request's
 * scope inside the failed transaction, and that second error (25P02, "current transaction is
 * aborted") hid the first. Scope switches inside a transaction now run in a savepoint, and
 * PostgreSQL's input errors are the caller's 400 in the global filter.
 */

// The text criteria a preview sends to PostgreSQL (matchAdGroup matches nothing in a preview: requests keep no directory groups).
const CRITERIA = ['matchSigner', 'matchPathGlob', 'matchParentImage', 'matchCommandLine', 'matchUser', 'matchToolName'] as const;
const invalidInput = { success: false, statusCode: 400, code: 'invalid_input', error: expect.any(String), requestId: expect.any(String) };

describe('attack: input PostgreSQL refuses, inside a scope switch', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    admin = `Bearer ${await t.token(ids.adminA, { mfa: true })}`;
  });
  afterAll(() => t.close());

  const preview = (body: object) => request(t.http).post('/api/v1/pam/rules/preview').set('Authorization', admin).send(body);

  it.each(CRITERIA)('answers a NUL character in %s of a rule preview with 400 invalid_input, not 500', async (criterion) => {
    const flowType = criterion === 'matchToolName' ? 'ai_tool_action' : undefined;
    const res = await preview({ [criterion]: 'Contoso\u0000Ltd', ...(flowType ? { flowType } : {}) });
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: invalidInput });
  });

  it('names no SQL, no PostgreSQL message and no transaction state in the answer', async () => {
    const res = await preview({ matchSigner: 'a\u0000b' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).not.toMatch(/SELECT|0x00|UTF8|transaction|aborted|postgres|QueryFailed/i);
  });

  it('previews normally afterwards', async () => {
    const res = await preview({ matchSigner: 'Contoso Ltd' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, totalMatched: 0 });
  });

  it('answers a page number whose offset is not a number PostgreSQL can read with 400, not 500 (the audit log spliced it into SQL)', async () => {
    const res = await request(t.http).get('/api/v1/audit-logs?page=1e308').set('Authorization', admin);
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: invalidInput });
    await request(t.http).get('/api/v1/audit-logs?page=2').set('Authorization', admin).expect(200);
  });

  it('answers /health afterwards', async () => {
    await request(t.http).get('/api/v1/health').expect(200, { status: 'ok' });
  });

  describe('TenantTransactionService.within', () => {
    const orgScope = () => ({ scope: 'organization' as const, orgIds: [ids.orgA], partnerIds: [], userId: ids.adminA });
    const setting = async (db: DbService) => (await db.one<{ scope: string; orgs: string }>(`SELECT current_setting('app.scope', true) AS scope, current_setting('app.org_ids', true) AS orgs`))!;

    it('surfaces the statement that failed inside a system-context step, not the aborted transaction', async () => {
      const tx = t.app.get(TenantTransactionService);
      const db = t.app.get(DbService);
      const failure = await tx
        .run(orgScope(), () => tx.withSystemContext('test: a statement PostgreSQL refuses', () => db.one(`SELECT $1::text AS v`, ['a\u0000b'])))
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(QueryFailedError);
      expect((failure as QueryFailedError & { driverError: { code: string } }).driverError.code).toBe('22021');
    });

    it('leaves the outer transaction usable, under the outer scope, after a caught failure', async () => {
      const tx = t.app.get(TenantTransactionService);
      const db = t.app.get(DbService);
      const after = await tx.run(orgScope(), async () => {
        await tx.withSystemContext('test: a failing insert', () => db.exec(`SELECT 1/0`)).catch(() => undefined);
        return { current: tx.currentScope().scope, db: await setting(db) };
      });
      expect(after).toEqual({ current: 'organization', db: { scope: 'organization', orgs: `{${ids.orgA}}` } });
    });

    it('keeps the work of a successful scoped step and restores the outer scope', async () => {
      const tx = t.app.get(TenantTransactionService);
      const db = t.app.get(DbService);
      const seen = await tx.run(orgScope(), async () => {
        await db.exec(`CREATE TEMP TABLE within_probe (v int) ON COMMIT DROP`);
        const inner = await tx.withSystemContext('test: a successful step', async () => {
          await db.exec(`INSERT INTO within_probe VALUES (1)`);
          return (await setting(db)).scope;
        });
        await tx.withSystemContext('test: a failing step', async () => {
          await db.exec(`INSERT INTO within_probe VALUES (2)`);
          await db.exec(`SELECT 1/0`);
        }).catch(() => undefined);
        const rows = await db.rows<{ v: number }>(`SELECT v FROM within_probe ORDER BY v`);
        return { inner, outer: (await setting(db)).scope, rows: rows.map((r) => r.v) };
      });
      expect(seen).toEqual({ inner: 'system', outer: 'organization', rows: [1] });
    });
  });
});
