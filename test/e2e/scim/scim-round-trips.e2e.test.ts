import request from 'supertest';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { recordPgMessages, type PgMessages } from '../../support/pg-messages';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { scimClient, USER } from './scim.kit';

/**
 * What an IdP's initial sync costs the database per user (docs/identity-lifecycle.md, "Throughput"):
 * the lookup by userName is one message, and a POST /Users a fixed handful, whatever the size of
 * the organization. Each message is a round trip; on a small machine they are most of the sync's time.
 */
describe('round trips to PostgreSQL of an IdP sync', () => {
  let t: TestApp;
  let c: ReturnType<typeof scimClient>;
  let pg: PgMessages;
  const f = tenantFixture();
  const domain = `${uniq('trips')}.example.com`;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    const ids = await t.seed(f);
    await ownerQuery(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now())`, [ids.orgA, domain]);
    const bearer = await t.token(ids.adminA, { mfa: true });
    const made = await request(t.http).post('/api/v1/scim/connections').set('Authorization', `Bearer ${bearer}`).send({ name: 'Round trips', defaultRoleId: ids.readerRoleA }).expect(201);
    c = scimClient(t.http, made.body.token);
    pg = recordPgMessages(t.app);
    await c.get('/Users?count=1').expect(200);
  });
  afterAll(() => t.close());

  const user = (email: string) => ({ schemas: [USER], userName: email, name: { givenName: 'Ada', familyName: 'Lovelace' }, emails: [{ value: email, type: 'work', primary: true }], active: true });

  it('looks a user up by userName in one message, the empty page with its total, without BEGIN or COMMIT', async () => {
    const email = `${uniq('nobody')}@${domain}`;
    let body: { totalResults?: number } = {};
    const messages = await pg.during(async () => {
      body = (await c.get(`/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`).expect(200)).body;
    });
    expect(body.totalResults).toBe(0);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^SELECT set_config\('app\.scope', 'organization'.*; SELECT \*, count\(\*\) OVER \(\) AS total/s);
    expect(messages[0]).not.toMatch(/BEGIN|COMMIT/);
  });

  it('answers a page past the end with the real total in that same one message', async () => {
    await c.post('/Users', user(`${uniq('paged')}@${domain}`)).expect(201);
    let body: { totalResults?: number; Resources?: unknown[] } = {};
    const messages = await pg.during(async () => {
      body = (await c.get('/Users?startIndex=100000&count=5').expect(200)).body;
    });
    expect(body.Resources).toEqual([]);
    expect(body.totalResults).toBeGreaterThanOrEqual(1);
    expect(messages).toHaveLength(1);
  });

  it('creates a user in six messages: facts with the grant rule, the account, the membership, the link answering the resource, the audit row, COMMIT', async () => {
    const messages = await pg.during(() => c.post('/Users', user(`${uniq('new')}@${domain}`)).expect(201));
    expect(messages).toHaveLength(6);
    expect(messages[0]).toMatch(/^BEGIN; SELECT set_config.*; SELECT EXISTS.*app_may_grant/s);
    expect(messages[1]).toMatch(/^SAVEPOINT .*'system'.*; INSERT INTO users/s);
    expect(messages[2]).toMatch(/^RELEASE SAVEPOINT .*; INSERT INTO organization_memberships/s);
    expect(messages[3]).toMatch(/^WITH su AS \(\s*INSERT INTO scim_users .* user_name, display_name, given_name, family_name.*RETURNING \*/s);
    expect(messages[4]).toMatch(/^INSERT INTO audit_logs/);
    expect(messages[5]).toBe('COMMIT');
  });
});
