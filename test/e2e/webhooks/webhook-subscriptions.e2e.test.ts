import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ownerQuery } from '../../support/test-app';
import { bearer, PamWorld, startPamWorld } from '../pam-lifecycle/pam-lifecycle.kit';
import { subscribe } from './webhooks.kit';

const HOOK = 'https://hooks.example.com/rmm';

/**
 * The subscription routes: who may call them, what another tenant sees, the limits at their edges,
 * and the secret, which only the answers of creation and rotation carry.
 */
describe('webhook subscriptions', () => {
  let w: PamWorld;
  const api = () => request(w.t.baseUrl);
  const path = (id: string, rest = '') => `/api/v1/webhooks/subscriptions/${id}${rest}`;

  beforeAll(async () => {
    w = await startPamWorld();
  });
  afterAll(() => w.t.close());

  async function orgSubscription(token = w.mfa.adminA): Promise<{ id: string; secret: string }> {
    const res = await subscribe(w, token, { orgId: w.ids.orgA, url: HOOK, eventTypes: ['elevation.requested'] }).expect(201);
    return { id: res.body.subscription.id, secret: res.body.secret };
  }

  it('answers the secret once at creation and once at rotation, never in another answer, and stores it sealed', async () => {
    const made = await subscribe(w, w.mfa.adminA, { orgId: w.ids.orgA, url: HOOK, eventTypes: ['elevation.approved', 'api_key.created'], description: 'PSA' }).expect(201);
    const { id } = made.body.subscription;
    expect(made.body).toMatchObject({ success: true, secret: expect.stringMatching(/^whsec_/), subscription: { scope: 'organization', orgId: w.ids.orgA, enabled: true, eventTypes: ['elevation.approved', 'api_key.created'] } });
    const rotated = await api().post(path(id, '/rotate-secret')).set(bearer(w.mfa.adminA)).send({}).expect(200);
    const secrets = [made.body.secret as string, rotated.body.secret as string];

    const answers = [
      made.body.subscription,
      rotated.body.subscription,
      (await api().get(path(id)).set(bearer(w.plain.adminA)).expect(200)).body,
      (await api().get('/api/v1/webhooks/subscriptions').set(bearer(w.plain.adminA)).expect(200)).body,
      (await api().patch(path(id)).set(bearer(w.mfa.adminA)).send({ description: 'PSA tickets' }).expect(200)).body,
      (await api().get(path(id, '/deliveries')).set(bearer(w.plain.adminA)).expect(200)).body,
      (await api().get('/api/v1/audit-logs').query({ action: 'webhook.*' }).set(bearer(w.plain.adminA)).expect(200)).body,
    ];
    const text = JSON.stringify(answers);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(6));
    }
    expect(text).not.toContain('whsec_');
    const [stored] = await ownerQuery<{ secret: string; previous_secret: string }>(`SELECT secret, previous_secret FROM webhook_subscriptions WHERE id = $1`, [id]);
    expect(stored.secret).toMatch(/^enc:v1:/);
    expect(stored.previous_secret).toMatch(/^enc:v1:/);
    const audit = await ownerQuery<{ details: unknown }>(`SELECT details FROM audit_logs WHERE resource_id = $1`, [id]);
    expect(audit).toHaveLength(3);
    for (const secret of secrets) expect(JSON.stringify(audit)).not.toContain(secret.slice(6));
  });

  it('lets a partner-wide technician create a partner subscription, refuses it to an organization session and to a selected-organizations technician', async () => {
    const body = { scope: 'partner', url: HOOK, eventTypes: ['sso.sign_in_refused'] };
    const made = await subscribe(w, w.mfa.tech, body).expect(201);
    expect(made.body.subscription).toMatchObject({ scope: 'partner', partnerId: w.ids.partner, orgId: null });
    expect((await subscribe(w, w.mfa.adminA, body).expect(403)).body.code).toBe('partner_scope_required');
    expect((await subscribe(w, w.mfa.techA, body).expect(403)).body.code).toBe('forbidden');
    // A partner subscription forwards every organization's events: a technician of some of them cannot see it.
    await api().get(path(made.body.subscription.id)).set(bearer(w.plain.techA)).expect(404);
    await api().patch(path(made.body.subscription.id)).set(bearer(w.mfa.techA)).send({ enabled: false }).expect(404);
  });

  it("answers 404 to another organization's administrator for every route on a subscription", async () => {
    const { id } = await orgSubscription();
    const messageId = randomUUID();
    const tries = [
      api().get(path(id)).set(bearer(w.mfa.adminB)),
      api().patch(path(id)).set(bearer(w.mfa.adminB)).send({ url: 'https://evil.example.com/' }),
      api().delete(path(id)).set(bearer(w.mfa.adminB)),
      api().post(path(id, '/rotate-secret')).set(bearer(w.mfa.adminB)).send({}),
      api().get(path(id, '/deliveries')).set(bearer(w.mfa.adminB)),
      api().post(path(id, `/messages/${messageId}/redeliver`)).set(bearer(w.mfa.adminB)).send({}),
    ];
    for (const res of await Promise.all(tries)) expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    const list = await api().get('/api/v1/webhooks/subscriptions').set(bearer(w.mfa.adminB)).expect(200);
    expect(JSON.stringify(list.body)).not.toContain(id);
    const [row] = await ownerQuery<{ url: string }>(`SELECT url FROM webhook_subscriptions WHERE id = $1`, [id]);
    expect(row.url).toBe(HOOK);
  });

  it('refuses every change without an MFA session, and each route to a caller without its permission', async () => {
    const { id } = await orgSubscription();
    const changes = [
      subscribe(w, w.plain.adminA, { orgId: w.ids.orgA, url: HOOK, eventTypes: ['elevation.requested'] }),
      api().patch(path(id)).set(bearer(w.plain.adminA)).send({ enabled: false }),
      api().delete(path(id)).set(bearer(w.plain.adminA)),
      api().post(path(id, '/rotate-secret')).set(bearer(w.plain.adminA)).send({}),
      api().post(path(id, `/messages/${randomUUID()}/redeliver`)).set(bearer(w.plain.adminA)).send({}),
    ];
    for (const res of await Promise.all(changes)) expect([res.status, res.body.code]).toEqual([403, 'mfa_required']);
    // readerA holds audit:read but not organizations:write: reads yes, changes no.
    await api().get(path(id)).set(bearer(w.mfa.readerA)).expect(200);
    const write = await api().patch(path(id)).set(bearer(w.mfa.readerA)).send({ enabled: false }).expect(403);
    expect(write.body).toMatchObject({ code: 'forbidden', permission: 'organizations:write' });
    const key = await api().post('/api/v1/api-keys').set(bearer(w.mfa.adminA)).send({ name: `key-${randomUUID()}`, orgId: w.ids.orgA, permissions: ['devices:read'] }).expect(201);
    const read = await api().get(path(id, '/deliveries')).set(bearer(key.body.key)).expect(403);
    expect(read.body).toMatchObject({ code: 'forbidden', permission: 'audit:read' });
  });

  it('refuses a site-restricted administrator: a subscription forwards the events of every site', async () => {
    const { id } = await orgSubscription();
    for (const res of [
      await api().get('/api/v1/webhooks/subscriptions').set(bearer(w.mfa.siteA1User)),
      await api().get(path(id)).set(bearer(w.mfa.siteA1User)),
      await subscribe(w, w.mfa.siteA1User, { orgId: w.ids.orgA, url: HOOK, eventTypes: ['elevation.requested'] }),
      await api().patch(path(id)).set(bearer(w.mfa.siteA1User)).send({ enabled: false }),
    ]) {
      expect([res.status, res.body.code]).toEqual([403, 'site_access_denied']);
    }
  });

  describe('bad input, each a 400 in the error shape, limits at their edges', () => {
    const bad = async (body: Record<string, unknown>, field?: string) => {
      const res = await subscribe(w, w.mfa.adminA, { orgId: w.ids.orgA, url: HOOK, eventTypes: ['elevation.requested'], ...body }).expect(400);
      expect(res.body).toMatchObject({ success: false, statusCode: 400, code: 'validation_failed', requestId: expect.any(String) });
      if (field) expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    };

    it('takes a URL of 2,048 characters and refuses one of 2,049', async () => {
      const url = (n: number) => `${HOOK}/${'a'.repeat(n - HOOK.length - 1)}`;
      await subscribe(w, w.mfa.adminA, { orgId: w.ids.orgA, url: url(2048), eventTypes: ['elevation.requested'] }).expect(201);
      await bad({ url: url(2049) }, 'url');
    });

    it('refuses a URL that is not https (this instance does not allow loopback http), has credentials or is no URL', async () => {
      await bad({ url: 'http://hooks.example.com/rmm' }, 'url');
      await bad({ url: 'http://127.0.0.1:9/rmm' }, 'url');
      await bad({ url: 'https://user:pass@hooks.example.com/' }, 'url');
      await bad({ url: 'not a url' }, 'url');
      await bad({ url: 42 }, 'url');
    });

    it('refuses an unknown event type, an empty list and a type named twice', async () => {
      await bad({ eventTypes: ['elevation.approvd'] }, 'eventTypes');
      await bad({ eventTypes: [] }, 'eventTypes');
      await bad({ eventTypes: ['elevation.approved', 'elevation.approved'] }, 'eventTypes');
      const res = await api().patch(path((await orgSubscription()).id)).set(bearer(w.mfa.adminA)).send({ eventTypes: ['audit.everything'] }).expect(400);
      expect(res.body.code).toBe('validation_failed');
    });

    it('takes a rotation overlap of 0 to 10,080 minutes and refuses one outside', async () => {
      const { id } = await orgSubscription();
      const rotate = (overlapMinutes: unknown) => api().post(path(id, '/rotate-secret')).set(bearer(w.mfa.adminA)).send({ overlapMinutes });
      expect((await rotate(10_080).expect(200)).body.subscription.previousSecretExpiresAt).toEqual(expect.any(String));
      expect((await rotate(0).expect(200)).body.subscription.previousSecretExpiresAt).toBeNull();
      for (const v of [10_081, -1, 1.5, 'soon']) expect((await rotate(v).expect(400)).body.code).toBe('validation_failed');
    });

    it('takes the 20th subscription of an organization and refuses the 21st', async () => {
      const [{ n }] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE org_id = $1`, [w.ids.orgB]);
      for (let i = n; i < 19; i++) await subscribe(w, w.mfa.adminB, { orgId: w.ids.orgB, url: HOOK, eventTypes: ['api_key.created'] }).expect(201);
      await subscribe(w, w.mfa.adminB, { orgId: w.ids.orgB, url: HOOK, eventTypes: ['api_key.created'] }).expect(201);
      const refused = await subscribe(w, w.mfa.adminB, { orgId: w.ids.orgB, url: HOOK, eventTypes: ['api_key.created'] }).expect(400);
      expect(refused.body).toMatchObject({ success: false, code: 'webhook_subscription_limit', limit: 20 });
      const [{ n: after }] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE org_id = $1`, [w.ids.orgB]);
      expect(after).toBe(20);
    });
  });

  it('deletes a subscription with its messages and delivery log', async () => {
    const { id } = await orgSubscription();
    await api().post('/api/v1/api-keys').set(bearer(w.mfa.adminA)).send({ name: `key-${randomUUID()}`, orgId: w.ids.orgA, permissions: ['devices:read'] }).expect(201);
    await api().delete(path(id)).set(bearer(w.mfa.adminA)).expect(200);
    await api().get(path(id)).set(bearer(w.mfa.adminA)).expect(404);
    expect(await ownerQuery(`SELECT 1 FROM webhook_messages WHERE subscription_id = $1 UNION ALL SELECT 1 FROM webhook_deliveries WHERE subscription_id = $1`, [id])).toEqual([]);
  });
});
