import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { NO_SCOPE } from '../../../src/infra/database/tenant-scope';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { refuse, RefusalService } from '../../../src/modules/audit/refusal.service';
import { AppException } from '../../../src/common/errors/app.exception';
import { ElevationExpiryJob } from '../../../src/modules/pam/requests/elevation-expiry.job';
import { ElevationTransitionService } from '../../../src/modules/pam/requests/elevation-transition.service';
import type { Principal } from '../../../src/common/principal';
import { ownerQuery } from '../../support/test-app';
import { ageRequest, bearer, PamWorld, respond, revoke, seedRequest, startPamWorld } from '../pam-lifecycle/pam-lifecycle.kit';
import { deliveries, dueNow, messagesOf, Receiver, subscribe, worker } from './webhooks.kit';

const ALL = ['elevation.requested', 'elevation.approved', 'elevation.denied', 'elevation.revoked', 'elevation.expired', 'elevation.actuated', 'sso.sign_in_refused', 'scim.user_deprovisioned', 'sso.provider_changed', 'api_key.created', 'api_key.revoked'];

/**
 * Webhooks end to end (issue 29, item 3): events queued in the transaction of the change, delivered
 * by the worker to a receiver on this machine, signed per Standard Webhooks and verified with the
 * `standardwebhooks` package as an integrator would.
 */
describe('webhook delivery', () => {
  let w: PamWorld;
  const receiver = new Receiver();

  beforeAll(async () => {
    w = await startPamWorld({ WEBHOOKS_ALLOW_INSECURE_LOOPBACK: 'true', WEBHOOK_TIMEOUT_MS: '1000' });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await w.t.close();
  });

  /** A subscription of organization A to `eventTypes` at a path of its own; its id and secret. */
  async function subscription(path: string, eventTypes: string[], token = w.mfa.adminA, extra: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
    const res = await subscribe(w, token, { orgId: w.ids.orgA, url: receiver.url(path), eventTypes, ...extra }).expect(201);
    return { id: res.body.subscription.id, secret: res.body.secret };
  }

  const verify = (secret: string, r: { headers: Record<string, string>; body: string }) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: any };

  it('delivers one signed request for a committed elevation approval, which the receiver verifies with standardwebhooks', async () => {
    const sub = await subscription('/approved', ['elevation.approved']);
    const id = await seedRequest(w);
    await respond(w, w.mfa.adminA, id, { decision: 'approve', durationMinutes: 30 }).expect(200);

    expect(await worker(w).runOnce()).toBeGreaterThanOrEqual(1);
    const got = receiver.at('/approved');
    expect(got).toHaveLength(1);
    const event = verify(sub.secret, got[0]);
    expect(event).toMatchObject({
      type: 'elevation.approved',
      timestamp: expect.stringMatching(/Z$/),
      data: {
        auditAction: 'pam.elevation.approve',
        organizationId: w.ids.orgA,
        partnerId: w.ids.partner,
        actor: { type: 'user', userId: w.ids.adminA },
        resource: { type: 'elevation_request', id },
        details: { via: 'console', durationMinutes: 30 },
        elevation: { id, status: 'approved', deviceId: w.ids.deviceA1, subjectUsername: 'CORP\\alice' },
      },
    });
    const [message] = await messagesOf(sub.id);
    expect(got[0].headers['webhook-id']).toBe(message.id);
    expect(message.status).toBe('delivered');
    const log = await deliveries(w, w.plain.adminA, sub.id).expect(200);
    expect(log.body.deliveries).toEqual([
      expect.objectContaining({ messageId: message.id, eventType: 'elevation.approved', attempt: 1, manual: false, statusCode: 200, outcome: 'delivered', failureReason: null, durationMs: expect.any(Number) }),
    ]);
  });

  it('emits nothing for a change that rolls back, and one event when the same change commits', async () => {
    const sub = await subscription('/rolled-back', ['elevation.approved']);
    const transitions = w.t.app.get(ElevationTransitionService);
    const tx = w.t.app.get(TenantTransactionService);
    const principal = { kind: 'user', userId: w.ids.adminA, apiKeyId: null } as Principal;
    const scope = { ...NO_SCOPE, scope: 'organization' as const, orgIds: [w.ids.orgA], userId: w.ids.adminA };
    const id = await seedRequest(w);

    await expect(
      tx.run(scope, async () => {
        expect(await transitions.decide(principal, id, 'approve', { durationMinutes: 15, reason: null })).not.toBeNull();
        throw new Error('the change fails after its audit row was written');
      }),
    ).rejects.toThrow(/fails after/);
    expect(await messagesOf(sub.id)).toEqual([]);
    await worker(w).runOnce();
    expect(receiver.at('/rolled-back')).toEqual([]);

    await tx.run(scope, () => transitions.decide(principal, id, 'approve', { durationMinutes: 15, reason: null }));
    expect((await messagesOf(sub.id)).map((m) => m.event_type)).toEqual(['elevation.approved']);
  });

  it('retries a refused attempt with the same webhook-id, logging each attempt', async () => {
    const sub = await subscription('/retry', ['elevation.denied']);
    receiver.script('/retry', [500, 503]);
    const id = await seedRequest(w);
    await respond(w, w.mfa.adminA, id, { decision: 'deny', reason: 'Not needed' }).expect(200);

    await worker(w).runOnce();
    const [queued] = await messagesOf(sub.id);
    expect(queued).toMatchObject({ status: 'pending', attempts: 1 });
    await dueNow(sub.id);
    await worker(w).runOnce();
    await dueNow(sub.id);
    await worker(w).runOnce();

    const got = receiver.at('/retry');
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([queued.id, queued.id, queued.id]);
    for (const r of got) expect(verify(sub.secret, r).type).toBe('elevation.denied');
    const log = await deliveries(w, w.plain.adminA, sub.id).expect(200);
    expect(log.body.deliveries.map((d: any) => [d.attempt, d.outcome, d.statusCode, d.failureReason])).toEqual([
      [3, 'delivered', 200, null],
      [2, 'failed', 503, 'http_status'],
      [1, 'failed', 500, 'http_status'],
    ]);
  });

  it('gets every event to a receiver that restarts mid-delivery at least once, each under its own stable id', async () => {
    const sub = await subscription('/restarting', ['elevation.approved']);
    receiver.script('/restarting', ['drop', 'drop', 'drop']);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await seedRequest(w));
      await respond(w, w.mfa.adminA, ids[i], { decision: 'approve', durationMinutes: 10 }).expect(200);
    }
    await worker(w).runOnce();
    await receiver.stop();
    await receiver.start(receiver.port);
    await dueNow(sub.id);
    await worker(w).runOnce();

    const messages = await messagesOf(sub.id);
    expect(messages.map((m) => m.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
    const delivered = new Map(receiver.at('/restarting').map((r) => [r.headers['webhook-id'], verify(sub.secret, r).data.resource.id]));
    expect(new Set(delivered.values())).toEqual(new Set(ids));
    expect([...delivered.keys()].sort()).toEqual(messages.map((m) => m.id).sort());
    const failures = (await deliveries(w, w.plain.adminA, sub.id).expect(200)).body.deliveries.filter((d: any) => d.outcome === 'failed');
    expect(failures).toHaveLength(3);
    expect(failures.every((d: any) => d.failureReason === 'connection_failed' && d.statusCode === null)).toBe(true);
  });

  it('signs with both secrets during a rotation overlap, and with the new one alone once the overlap ends', async () => {
    const sub = await subscription('/rotated', ['elevation.revoked']);
    const rotated = await request(w.t.baseUrl).post(`/api/v1/webhooks/subscriptions/${sub.id}/rotate-secret`).set(bearer(w.mfa.adminA)).send({ overlapMinutes: 60 }).expect(200);
    const next = rotated.body.secret as string;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(sub.secret);
    expect(Date.parse(rotated.body.subscription.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(55 * 60_000);

    const approvedId = await seedRequest(w, { status: 'approved' });
    await revoke(w, w.mfa.adminA, approvedId, { reason: 'Done' }).expect(200);
    await worker(w).runOnce();
    const [during] = receiver.at('/rotated');
    expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(next, during).type).toBe('elevation.revoked');
    expect(verify(sub.secret, during).type).toBe('elevation.revoked');

    await ownerQuery(`UPDATE webhook_subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [sub.id]);
    const second = await seedRequest(w, { status: 'approved' });
    await revoke(w, w.mfa.adminA, second, { reason: 'Done' }).expect(200);
    await worker(w).runOnce();
    const after = receiver.at('/rotated')[1];
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verify(next, after).type).toBe('elevation.revoked');
    expect(() => verify(sub.secret, after)).toThrow(/No matching signature/);
  });

  it('refuses a redirecting receiver without following it, and a private address without connecting, the log saying why', async () => {
    const redirecting = await subscription('/redirect', ['api_key.created']);
    receiver.script('/redirect', [{ redirect: receiver.url('/redirect-target') }]);
    const privateSub = (await subscribe(w, w.mfa.adminA, { orgId: w.ids.orgA, url: `https://127.0.0.1:${receiver.port}/private`, eventTypes: ['api_key.created'] }).expect(201)).body.subscription.id;
    await request(w.t.baseUrl).post('/api/v1/api-keys').set(bearer(w.mfa.adminA)).send({ name: `key-${randomUUID()}`, orgId: w.ids.orgA, permissions: ['devices:read'] }).expect(201);

    await worker(w).runOnce();
    expect(receiver.at('/redirect')).toHaveLength(1);
    expect(receiver.at('/redirect-target')).toEqual([]);
    expect(receiver.at('/private')).toEqual([]);
    const [redirectLog] = (await deliveries(w, w.plain.adminA, redirecting.id).expect(200)).body.deliveries;
    expect(redirectLog).toMatchObject({ outcome: 'failed', statusCode: 302, failureReason: 'redirect', failureMessage: expect.stringMatching(/redirect.*never followed/) });
    const [privateLog] = (await deliveries(w, w.plain.adminA, privateSub).expect(200)).body.deliveries;
    expect(privateLog).toMatchObject({ outcome: 'failed', statusCode: null, failureReason: 'unreachable_address', failureMessage: expect.stringMatching(/public address/) });
  });

  it('times out a receiver that never answers, while another subscription of the same event is delivered in the same run', async () => {
    const hanging = await subscription('/hang', ['sso.provider_changed']);
    const fast = await subscription('/fast', ['sso.provider_changed']);
    receiver.script('/hang', ['hang']);
    await request(w.t.baseUrl).post('/api/v1/sso/providers').set(bearer(w.mfa.adminA)).send({ name: `IdP ${randomUUID()}`, type: 'saml', orgId: w.ids.orgA }).expect(201);

    await worker(w).runOnce();
    expect((await messagesOf(fast.id)).map((m) => m.status)).toEqual(['delivered']);
    const [log] = (await deliveries(w, w.plain.adminA, hanging.id).expect(200)).body.deliveries;
    expect(log).toMatchObject({ outcome: 'failed', failureReason: 'timeout', statusCode: null });
    expect(log.durationMs).toBeGreaterThanOrEqual(900);
    expect((await messagesOf(hanging.id)).map((m) => m.status)).toEqual(['pending']);
  });

  it('redelivers a delivered message on request, with the same webhook-id, logged as manual', async () => {
    const sub = await subscription('/redeliver', ['api_key.revoked']);
    const key = await request(w.t.baseUrl).post('/api/v1/api-keys').set(bearer(w.mfa.adminA)).send({ name: `key-${randomUUID()}`, orgId: w.ids.orgA, permissions: ['devices:read'] }).expect(201);
    await request(w.t.baseUrl).delete(`/api/v1/api-keys/${key.body.apiKey.id}`).set(bearer(w.mfa.adminA)).expect(200);
    await worker(w).runOnce();
    const [message] = await messagesOf(sub.id);
    expect(message.status).toBe('delivered');

    const again = await request(w.t.baseUrl).post(`/api/v1/webhooks/subscriptions/${sub.id}/messages/${message.id}/redeliver`).set(bearer(w.mfa.adminA)).send({}).expect(202);
    expect(again.body.message).toMatchObject({ id: message.id, status: 'pending', eventType: 'api_key.revoked' });
    await worker(w).runOnce();
    const got = receiver.at('/redeliver');
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([message.id, message.id]);
    expect(verify(sub.secret, got[1]).data.resource.id).toBe(key.body.apiKey.id);
    const log = (await deliveries(w, w.plain.adminA, sub.id, { messageId: message.id }).expect(200)).body.deliveries;
    expect(log.map((d: any) => [d.attempt, d.manual, d.outcome])).toEqual([
      [2, true, 'delivered'],
      [1, false, 'delivered'],
    ]);
    await request(w.t.baseUrl).post(`/api/v1/webhooks/subscriptions/${sub.id}/messages/${randomUUID()}/redeliver`).set(bearer(w.mfa.adminA)).send({}).expect(404);
  });

  it('disables a subscription whose every attempt has failed for 24 hours, with an audit row, and queues nothing more for it', async () => {
    const sub = await subscription('/failing', ['elevation.denied']);
    receiver.script('/failing', [500]);
    await ownerQuery(`UPDATE webhook_subscriptions SET failing_since = now() - interval '25 hours' WHERE id = $1`, [sub.id]);
    const id = await seedRequest(w);
    await respond(w, w.mfa.adminA, id, { decision: 'deny' }).expect(200);
    await worker(w).runOnce();

    const read = await request(w.t.baseUrl).get(`/api/v1/webhooks/subscriptions/${sub.id}`).set(bearer(w.plain.adminA)).expect(200);
    expect(read.body.subscription).toMatchObject({ enabled: false, disabledReason: 'failing_24h', disabledAt: expect.any(String) });
    const audit = await ownerQuery<{ actor_type: string; org_id: string; details: any }>(`SELECT actor_type, org_id, details FROM audit_logs WHERE action = 'webhook.subscription.disabled' AND resource_id = $1`, [sub.id]);
    expect(audit).toEqual([{ actor_type: 'system', org_id: w.ids.orgA, details: expect.objectContaining({ reason: 'failing_24h', disableAfterHours: 24 }) }]);

    const later = await seedRequest(w);
    await respond(w, w.mfa.adminA, later, { decision: 'deny' }).expect(200);
    expect(await messagesOf(sub.id)).toHaveLength(1);
    const [message] = await messagesOf(sub.id);
    const refused = await request(w.t.baseUrl).post(`/api/v1/webhooks/subscriptions/${sub.id}/messages/${message.id}/redeliver`).set(bearer(w.mfa.adminA)).send({}).expect(409);
    expect(refused.body).toMatchObject({ success: false, code: 'webhook_subscription_disabled' });

    const enabled = await request(w.t.baseUrl).patch(`/api/v1/webhooks/subscriptions/${sub.id}`).set(bearer(w.mfa.adminA)).send({ enabled: true }).expect(200);
    expect(enabled.body.subscription).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  });

  describe('each event type, from the code path that makes the change', () => {
    let sub: { id: string; secret: string };
    const types = async () => (await messagesOf(sub.id)).map((m) => m.event_type);
    const last = async () => (await messagesOf(sub.id)).at(-1)!;

    beforeAll(async () => {
      sub = await subscription('/every', ALL);
    });

    it('elevation.requested: a prompt that waits for a technician, from agent ingest', async () => {
      const res = await request(w.t.baseUrl)
        .post(`/api/v1/agents/${w.agentIds.deviceA1}/elevation-requests`)
        .set(bearer(w.agentTokens.deviceA1))
        .send({ subject_username: 'CORP\\bob', target_executable_path: 'C:\\Tools\\setup.exe', target_executable_hash: 'cd'.repeat(32), pid: 7, observed_at: new Date().toISOString() })
        .expect(201);
      expect(res.body.status).toBe('pending');
      expect((await last()).payload).toMatchObject({ type: 'elevation.requested', data: { actor: { type: 'agent' }, resource: { id: res.body.id }, elevation: { status: 'pending', subjectUsername: 'CORP\\bob', deviceHostname: expect.stringMatching(/^WS-A1-/) } } });
    });

    it('elevation.approved and elevation.denied: console decisions', async () => {
      await respond(w, w.mfa.adminA, await seedRequest(w), { decision: 'approve', durationMinutes: 5 }).expect(200);
      expect((await last()).event_type).toBe('elevation.approved');
      await respond(w, w.mfa.adminA, await seedRequest(w), { decision: 'deny' }).expect(200);
      expect((await last()).event_type).toBe('elevation.denied');
    });

    it('elevation.actuated and elevation.revoked: actuation on the device, then revocation', async () => {
      const id = await seedRequest(w, { status: 'approved' });
      await request(w.t.baseUrl).post(`/api/v1/devices/${w.ids.deviceA1}/actuate-elevation`).set(bearer(w.mfa.adminA)).send({ elevationRequestId: id }).expect(201);
      expect((await last()).payload).toMatchObject({ type: 'elevation.actuated', data: { elevation: { id, status: 'actuating' } } });
      await revoke(w, w.mfa.adminA, id, { reason: 'Finished' }).expect(200);
      expect((await last()).payload).toMatchObject({ type: 'elevation.revoked', data: { elevation: { id, status: 'revoked' } } });
    });

    it('elevation.expired: the expiry sweep, a background job in system context', async () => {
      const id = await seedRequest(w);
      await ageRequest(id, 60 * 24);
      await w.t.app.get(ElevationExpiryJob).runOnce();
      const expired = (await messagesOf(sub.id)).filter((m) => m.event_type === 'elevation.expired' && m.payload.data.resource.id === id);
      expect(expired).toHaveLength(1);
      expect(expired[0].payload.data.actor).toEqual({ type: 'system', id: null, userId: null });
    });

    it('sso.sign_in_refused: a refusal, whose audit row commits on its own while the refused work rolls back', async () => {
      const refusals = w.t.app.get(RefusalService);
      const providerId = randomUUID();
      await expect(
        refusals.withSystemContext('a refused sign-in, as the sign-in pipeline settles it', async () => {
          await ownerQuery('SELECT 1');
          refuse(AppException.forbidden('sso_error', 'refused'), {
            audit: { action: 'sso.login.rejected', orgId: w.ids.orgA, resourceType: 'sso_provider', resourceId: providerId, actor: { type: 'system', id: null }, details: { code: 'sso_error', reason: 'assertion_replayed' } },
          });
        }),
      ).rejects.toMatchObject({ code: 'sso_error' });
      expect((await last()).payload).toMatchObject({ type: 'sso.sign_in_refused', data: { resource: { id: providerId }, details: { reason: 'assertion_replayed' } } });
    });

    it('sso.provider_changed: creating and changing a provider', async () => {
      const made = await request(w.t.baseUrl).post('/api/v1/sso/providers').set(bearer(w.mfa.adminA)).send({ name: `IdP ${randomUUID()}`, type: 'saml', orgId: w.ids.orgA }).expect(201);
      expect((await last()).payload).toMatchObject({ type: 'sso.provider_changed', data: { auditAction: 'sso.provider.create', resource: { id: made.body.provider.id } } });
      await request(w.t.baseUrl).delete(`/api/v1/sso/providers/${made.body.provider.id}`).set(bearer(w.mfa.adminA)).expect(200);
      expect((await last()).payload).toMatchObject({ type: 'sso.provider_changed', data: { auditAction: 'sso.provider.delete' } });
    });

    it('api_key.created and api_key.revoked, never carrying the key', async () => {
      const key = await request(w.t.baseUrl).post('/api/v1/api-keys').set(bearer(w.mfa.adminA)).send({ name: `key-${randomUUID()}`, orgId: w.ids.orgA, permissions: ['devices:read'] }).expect(201);
      const created = await last();
      expect(created.payload).toMatchObject({ type: 'api_key.created', data: { resource: { id: key.body.apiKey.id } } });
      expect(JSON.stringify(created.payload)).not.toContain(key.body.key);
      await request(w.t.baseUrl).delete(`/api/v1/api-keys/${key.body.apiKey.id}`).set(bearer(w.mfa.adminA)).expect(200);
      expect((await last()).event_type).toBe('api_key.revoked');
    });

    it('scim.user_deprovisioned: a SCIM PATCH that sets active to false', async () => {
      const connection = await request(w.t.baseUrl).post('/api/v1/scim/connections').set(bearer(w.mfa.adminA)).send({ name: 'IdP', orgId: w.ids.orgA, defaultRoleId: w.ids.readerRoleA }).expect(201);
      const scim = (r: request.Test) => r.set('Authorization', `Bearer ${connection.body.token}`).set('Content-Type', 'application/scim+json');
      // SCIM provisions addresses of the organization's verified domains only.
      const domain = `scim-${randomUUID().slice(0, 8)}.example`;
      await ownerQuery(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now())`, [w.ids.orgA, domain]);
      const email = `leaver@${domain}`;
      const user = await scim(request(w.t.baseUrl).post('/api/v1/scim/v2/Users'))
        .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: email, active: true, emails: [{ primary: true, type: 'work', value: email }] }))
        .expect(201);
      await scim(request(w.t.baseUrl).patch(`/api/v1/scim/v2/Users/${user.body.id}`))
        .send(JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] }))
        .expect(200);
      expect((await last()).payload).toMatchObject({ type: 'scim.user_deprovisioned', data: { resource: { type: 'user', id: user.body.id }, details: { sessionsRevoked: 0, apiKeysRevoked: 0 } } });
    });

    it('has made every documented event type', async () => {
      expect(new Set(await types())).toEqual(new Set(ALL));
    });
  });
});
