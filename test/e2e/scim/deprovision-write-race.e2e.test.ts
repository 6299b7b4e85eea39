import { Client } from 'pg';
import request from 'supertest';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const IN_FLIGHT = 20;

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Issue 16: "a user deactivated while 20 requests with their token are in flight: none succeeds
 * after the deactivation commits", for writes. The writes are held inside their transactions,
 * past authentication, by a lock the test takes on the user's row (each new API key references
 * its creator), while the deprovisioning runs; then the lock is released. A write that committed
 * after the deprovisioning would leave a key the deprovisioned user created alive.
 */
describe('deprovisioning with writes in flight', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  const domain = `${uniq('race')}.example.com`;

  beforeAll(async () => {
    // Room for the writes held in their transactions and the deprovisioning beside them.
    t = await startTestApp({ DATABASE_POOL_SIZE: String(IN_FLIGHT + 10) }, { listen: true });
    ids = await t.seed(f);
    await ownerQuery(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now())`, [ids.orgA, domain]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lets no write made with the user\'s session commit after the deprovisioning: every key they created is revoked, later writes are 401', async () => {
    const admin = await t.token(ids.adminA, { mfa: true });
    const created = await request(t.baseUrl).post('/api/v1/scim/connections').set('Authorization', `Bearer ${admin}`).send({ name: 'IdP', orgId: ids.orgA, defaultRoleId: ids.adminRoleA }).expect(201);
    const scimToken = created.body.token as string;
    const email = `racer-${uniq()}@${domain}`;
    const user = await request(t.baseUrl)
      .post('/api/v1/scim/v2/Users')
      .set('Authorization', `Bearer ${scimToken}`)
      .set('Content-Type', 'application/scim+json')
      .send(JSON.stringify({ schemas: [USER], userName: email, externalId: uniq('ext'), active: true, emails: [{ primary: true, type: 'work', value: email }] }))
      .expect(201);
    const userId = user.body.id as string;
    const bearer = await t.token(userId, { mfa: true });
    const newKey = () => request(t.baseUrl).post('/api/v1/api-keys').set('Authorization', `Bearer ${bearer}`).send({ name: uniq('key'), orgId: ids.orgA, permissions: ['devices:read'] });
    await newKey().expect(201);

    const holder = new Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await holder.query('COMMIT');
    };
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
      const inFlight = Array.from({ length: IN_FLIGHT }, () => newKey().then((r) => r.status));
      const waitingOnUser = async () => {
        const [row] = await ownerQuery<{ n: string }>(
          // The key's INSERT, however it is spelt (TypeORM quotes the table name).
          `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ~* 'INSERT INTO "?api_keys"?' AND pid <> pg_backend_pid()`,
        );
        return Number(row.n) >= IN_FLIGHT;
      };
      await until('the writes to be held past authentication', waitingOnUser);

      let answered = false;
      const deactivation = request(t.baseUrl)
        .patch(`/api/v1/scim/v2/Users/${userId}`)
        .set('Authorization', `Bearer ${scimToken}`)
        .set('Content-Type', 'application/scim+json')
        .send(JSON.stringify({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }))
        .then((r) => {
          answered = true;
          return r;
        });
      // Either the deprovisioning commits while the writes are held, or it waits for them.
      await until('the deprovisioning to commit or to wait', async () => {
        if (answered) return true;
        const [row] = await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%scim_deprovision_user%'`);
        return Number(row.n) > 0;
      });
      await release();

      const statuses = await Promise.all(inFlight);
      expect((await deactivation).status).toBe(200);
      expect(statuses.every((s) => s === 201 || s === 401)).toBe(true);

      const [keys] = await ownerQuery<{ live: string; revoked: string }>(
        `SELECT count(*) FILTER (WHERE revoked_at IS NULL) AS live, count(*) FILTER (WHERE revoked_at IS NOT NULL) AS revoked FROM api_keys WHERE created_by = $1`,
        [userId],
      );
      expect(Number(keys.live)).toBe(0);
      expect(Number(keys.revoked)).toBe(1 + statuses.filter((s) => s === 201).length);

      const later = await Promise.all(Array.from({ length: 5 }, () => newKey().then((r) => r.status)));
      expect(later).toEqual([401, 401, 401, 401, 401]);
    } finally {
      await release();
      await holder.end();
    }
  });
});
