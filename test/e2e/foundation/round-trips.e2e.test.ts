import request from 'supertest';
import { TenantTransaction } from '../../../src/infra/database/tenant-transaction.service';
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

  it('resolves an agent on a cache miss with one message and no transaction, then reads its settings in two (open with the read, commit)', async () => {
    const messages = await messagesOf(() => k.settings('deviceA1').expect(200));
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatch(/^SELECT set_config\('app\.scope', 'system'.*; SELECT a\.id AS agent_id/s);
    expect(messages[0]).not.toMatch(/BEGIN/);
    expect(messages[1]).toMatch(/^BEGIN; SELECT set_config\('app\.scope', 'organization'.*; SELECT /s);
    expect(messages[2]).toBe('COMMIT');
  });

  it('costs a cached agent two messages for a one-read route', async () => {
    const messages = await messagesOf(() => k.settings('deviceA1').expect(200));
    expect(messages.map((m) => m.slice(0, 5))).toEqual(['BEGIN', 'COMMI']);
  });

  it('costs a cached agent polling an empty command queue two messages: withdrawal and hand-out are one function call', async () => {
    const a = k.agent('deviceA1');
    const poll = () => request(t.http).get(`/api/v1/agents/${a.id}/commands`).set('Authorization', `Bearer ${a.token}`).expect(200);
    await poll();
    const messages = await messagesOf(poll);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/^BEGIN; SELECT set_config\(.*; SELECT .* FROM app_agent_commands_take\(/s);
    expect(messages[1]).toBe('COMMIT');
  });

  it('counts each stated reason for entering system context, the agent lookup among them', () => {
    const counts = t.app.get(TenantTransaction).systemContextCounts();
    expect(counts['resolve an agent token to its device']).toBeGreaterThanOrEqual(1);
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
