import request from 'supertest';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { recordPgMessages, type PgMessages } from '../../support/pg-messages';
import { startTestApp, TestApp } from '../../support/test-app';
import { AgentKit, prompt } from '../agent/agent-kit';

/**
 * How many messages a request sends to PostgreSQL (each one a round trip): the lean request path
 * opens a tenant transaction with its first statement, and resolves an agent with one statement
 * and no transaction of its own (docs/architecture.md, "Request path").
 */
describe('round trips to PostgreSQL per request', () => {
  let t: TestApp;
  let k: AgentKit;
  let pg: PgMessages;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    k = await new AgentKit(t).seed();
    pg = recordPgMessages(t.app);
  });
  afterAll(() => t.close());

  const messagesOf = (send: () => Promise<unknown>) => pg.during(send);

  it('resolves an agent on a cache miss with one message and no transaction, then reads its settings in one more (the read alone with its settings)', async () => {
    const messages = await messagesOf(() => k.settings('deviceA1').expect(200));
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/^SELECT set_config\('app\.scope', 'system'.*; SELECT a\.token_hash, a\.id AS agent_id/s);
    expect(messages[0]).not.toMatch(/BEGIN/);
    expect(messages[1]).toMatch(/^SELECT set_config\('app\.scope', 'organization'.*; SELECT /s);
    expect(messages[1]).not.toMatch(/BEGIN|COMMIT/);
  });

  it('costs a cached agent one message for a one-read route marked @OneStatement: no BEGIN, no COMMIT', async () => {
    const messages = await messagesOf(() => k.settings('deviceA1').expect(200));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^SELECT set_config\('app\.scope', 'organization'.*; SELECT /s);
  });

  it('costs a cached agent polling an empty command queue one message: withdrawal and hand-out are one function call, run alone with its settings', async () => {
    const a = k.agent('deviceA1');
    const poll = () => request(t.http).get(`/api/v1/agents/${a.id}/commands`).set('Authorization', `Bearer ${a.token}`).expect(200);
    await poll();
    const messages = await messagesOf(poll);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^SELECT set_config\(.*; SELECT .* FROM app_agent_commands_take\(/s);
    expect(messages[0]).not.toMatch(/BEGIN|COMMIT/);
  });

  it('costs a technician listing organizations one message once the session is cached: the list alone with its settings', async () => {
    const list = () => request(t.http).get('/api/v1/organizations').set('Authorization', k.admin.tech).expect(200);
    await list();
    const messages = await messagesOf(list);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^SELECT set_config\('app\.scope', 'partner'.*; SELECT .* FROM organizations/s);
    expect(messages[0]).not.toMatch(/BEGIN|COMMIT/);
  });

  it('costs a technician listing elevation requests, or the elevations in force, one message each: the page with its total, alone with its settings', async () => {
    for (const path of ['/api/v1/pam/elevation-requests?status=pending&limit=10', '/api/v1/pam/active']) {
      const list = () => request(t.http).get(path).set('Authorization', k.admin.tech).expect(200);
      await list();
      const messages = await messagesOf(list);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(/^SELECT set_config\('app\.scope', 'partner'.*; .*FROM elevation_requests/s);
      expect(messages[0]).not.toMatch(/BEGIN|COMMIT/);
    }
  });

  it('counts each stated reason for entering system context, the agent lookup among them', () => {
    const counts = t.app.get(TenantTransactionService).systemContextCounts();
    expect(counts['resolve agent tokens to their devices']).toBeGreaterThanOrEqual(1);
    expect(Object.values(counts).every((n) => Number.isInteger(n) && n > 0)).toBe(true);
  });

  it('sends nothing for a route that runs no statement', async () => {
    expect(await messagesOf(() => request(t.http).get('/api/v1/health').expect(200))).toEqual([]);
  });

  it('opens the ingest transaction with its first statement and commits once', async () => {
    const messages = await messagesOf(() => k.ingest('deviceA1', prompt()).expect((r) => expect(r.status).toBeLessThan(300)));
    expect(messages[0]).toMatch(/^BEGIN; SELECT set_config/);
    expect(messages.filter((m) => m === 'BEGIN' || /^SELECT set_config\('app\.scope'/.test(m))).toEqual([]);
    expect(messages[messages.length - 1]).toBe('COMMIT');
  });
});
