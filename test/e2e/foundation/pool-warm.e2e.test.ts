import { DbService } from '../../../src/infra/database/db.service';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * A start opens DATABASE_POOL_WARM request-role connections before the instance listens, and keeps
 * them while idle, so the first requests after a start (or a quiet spell) wait for no connection set-up.
 */
describe('the warm request-role pool', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DATABASE_POOL_WARM: '3' });
  });
  afterAll(() => t.close());

  it('holds the warm connections open and idle once the application has started, before any request', () => {
    const pool = t.app.get(DbService).pool();
    expect(pool.totalCount).toBe(3);
    expect(pool.idleCount).toBe(3);
  });

  it('refuses a warm count that is not a whole number from 0 to 1000 at start', async () => {
    await expect(startTestApp({ DATABASE_POOL_WARM: '-1' })).rejects.toThrow(/DATABASE_POOL_WARM/);
  });
});
