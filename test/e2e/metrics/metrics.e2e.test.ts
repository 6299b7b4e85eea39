import request from 'supertest';
import { startTestApp, TestApp } from '../../support/test-app';
import { JobsService } from '../../../src/infra/jobs/jobs.service';
import { AgentKit, prompt } from '../agent/agent-kit';

/** The value of one sample of the exposition text, or undefined when that sample is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const TOKEN = 'metrics-token-'.padEnd(40, 'x');

describe('GET /metrics for Prometheus', () => {
  let t: TestApp;
  let k: AgentKit;

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
  });
  afterAll(() => t.close());

  const scrape = async () => (await request(t.http).get('/metrics').expect(200)).text;

  it('times requests under their route template and status class, never the path with its id', async () => {
    const orgId = k.ids.orgA;
    await request(t.http).get(`/api/v1/organizations/${orgId}`).set('Authorization', k.admin.adminA).expect(200);
    await request(t.http).get('/api/v1/no-such-route/123').expect(404);
    const text = await scrape();
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/v1/organizations/:id', status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status_class: '4xx' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(orgId);
    expect(text).not.toContain('no-such-route');
  });

  it('reports the request pool: connections open, idle, and requests waiting', async () => {
    const text = await scrape();
    for (const state of ['total', 'idle', 'waiting']) expect(sample(text, 'rmm_db_pool_connections', { state })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'rmm_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
  });

  it('counts an ingest decision under its verdict and flow', async () => {
    const labels = { verdict: 'pending', flow: 'uac_intercept' };
    const before = sample(await scrape(), 'rmm_ingest_decisions_total', labels) ?? 0;
    await k.ingest('deviceA1', prompt()).expect(201);
    expect(sample(await scrape(), 'rmm_ingest_decisions_total', labels)).toBe(before + 1);
  });

  it('counts a refused password sign-in under its public code, without the email', async () => {
    const labels = { protocol: 'password', outcome: 'invalid_credentials' };
    const before = sample(await scrape(), 'rmm_sign_ins_total', labels) ?? 0;
    await request(t.http).post('/api/v1/auth/login').send({ email: 'metrics-nobody@example.com', password: 'wrong-password' }).expect(401);
    const text = await scrape();
    expect(sample(text, 'rmm_sign_ins_total', labels)).toBe(before + 1);
    expect(text).not.toContain('metrics-nobody');
  });

  it('reads the push outbox backlog at scrape', async () => {
    const text = await scrape();
    expect(sample(text, 'rmm_push_outbox_rows', { status: 'pending' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'rmm_push_outbox_rows', { status: 'failed' })).toBeGreaterThanOrEqual(0);
  });

  it('counts a SCIM call refused for its token under the SCIM operation and outcome', async () => {
    const labels = { resource: 'users', operation: 'list', outcome: 'unauthorized' };
    const before = sample(await scrape(), 'rmm_scim_operations_total', labels) ?? 0;
    await request(t.http).get('/api/v1/scim/v2/Users').set('Authorization', 'Bearer not-a-scim-token').expect(401);
    expect(sample(await scrape(), 'rmm_scim_operations_total', labels)).toBe(before + 1);
  });

  it('stays out of the OpenAPI document', async () => {
    const doc = (await request(t.http).get('/api/docs-json').expect(200)).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.includes('metrics'))).toEqual([]);
  });

  it('refuses, outside production without a token, a caller a proxy forwards from elsewhere', async () => {
    // Supertest connects from loopback, the proxy TRUST_PROXY trusts by default: the forwarded address is the client.
    const res = await request(t.http).get('/metrics').set('X-Forwarded-For', '203.0.113.7').expect(403);
    expect(res.body).toMatchObject({ statusCode: 403, code: 'forbidden' });
  });
});

describe('GET /metrics on an instance that runs background jobs', () => {
  it('reports pg-boss jobs per queue and state', async () => {
    // The only queue this instance schedules is one nobody works, so the job stays queued.
    const queue = `metrics_probe_${process.pid}`;
    const t = await startTestApp({ START_JOBS: 'true', JOBS_TEST_QUEUES: queue });
    const boss = t.app.get(JobsService).client!;
    try {
      await boss.createQueue(queue);
      await boss.send(queue, {});
      const text = (await request(t.http).get('/metrics').expect(200)).text;
      expect(sample(text, 'rmm_jobs_queue_jobs', { queue, state: 'created' })).toBe(1);
    } finally {
      await boss.deleteQueue(queue).catch(() => undefined);
      await t.close();
    }
  });
});

describe('GET /metrics in production', () => {
  const production = { NODE_ENV: 'production', START_JOBS: 'false', SSO_ALLOW_INSECURE_LOOPBACK_IDP: undefined, SECRET_ENCRYPTION_KEY: 'e'.repeat(40), JWT_SECRET: 'j'.repeat(40) };

  it('answers 404 when METRICS_TOKEN is not set, even on loopback', async () => {
    const t = await startTestApp({ ...production, METRICS_TOKEN: undefined });
    try {
      await request(t.http).get('/metrics').expect(404);
    } finally {
      await t.close();
    }
  });

  it('answers the bearer token it is configured with, and 401 to a missing or wrong one', async () => {
    const t = await startTestApp({ ...production, METRICS_TOKEN: TOKEN });
    try {
      await request(t.http).get('/metrics').expect(401);
      await request(t.http).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`).expect(401);
      const res = await request(t.http).get('/metrics').set('Authorization', `Bearer ${TOKEN}`).set('X-Forwarded-For', '203.0.113.7').expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toContain('rmm_db_pool_connections');
    } finally {
      await t.close();
    }
  });
});
