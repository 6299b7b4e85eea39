import { randomUUID } from 'node:crypto';
import { WebhookSubscriptionRepository, type SubscriptionWrite } from '../../../src/modules/webhooks/webhook-subscription.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Webhook subscriptions as their administrators change them: an organization's subscriptions for
 * its callers, a partner's only for callers reaching all its organizations. Organization A2nd gets
 * three subscriptions with set creation times (the list's order) and organization A one with
 * messages and a delivery log. The outbox rows here are never due for the delivery worker: their
 * subscriptions are disabled, or their next attempt lies a day ahead.
 */
describe('WebhookSubscriptionRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: WebhookSubscriptionRepository;
  let listed: string[];
  let partnerSub: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminA2 = () => orgPrincipal(t.orgA2);
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  /** A technician of P reaching organization A only: not the partner's rows. */
  const asSelectedTech = () => partnerPrincipal(t.partnerP, [t.orgA], { userId: t.tech, partnerWide: false });
  const write = (over: Partial<SubscriptionWrite> = {}): SubscriptionWrite => ({
    url: `https://hooks.example/${t.label}/${randomUUID()}`,
    eventTypes: ['elevation.approved'],
    enabled: true,
    description: null,
    ...over,
  });
  const stored = async (id: string) => (await m.owner.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [id])).rows[0];
  /** A subscription of organization A arranged through the owner connection, disabled unless told otherwise. */
  const arrangeSub = async (orgId: string, over: { enabled?: boolean; createdAt?: string; failingSince?: string } = {}) => {
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (org_id, url, event_types, enabled, secret, created_at, failing_since)
       VALUES ($1, $2, '{elevation.approved}', $3, 'sealed-arranged', coalesce($4::timestamptz, now()), $5) RETURNING id`,
      [orgId, `https://hooks.example/${t.label}/arranged`, over.enabled ?? false, over.createdAt ?? null, over.failingSince ?? null],
    );
    return rows[0].id;
  };
  const arrangeMessage = async (subscriptionId: string, orgId: string, over: { status?: string; attempts?: number } = {}) => {
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO webhook_messages (subscription_id, org_id, event_type, payload, status, attempts, next_attempt_at, retry_until)
       VALUES ($1, $2, 'elevation.approved', '{}', $3, $4, now() + interval '1 day', now() - interval '1 hour') RETURNING id`,
      [subscriptionId, orgId, over.status ?? 'dead', over.attempts ?? 3],
    );
    return rows[0].id;
  };
  const arrangeDelivery = (subscriptionId: string, messageId: string, orgId: string, attempt: number, attemptedAt: string) =>
    m.owner.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (subscription_id, message_id, org_id, event_type, attempt, attempted_at, duration_ms, status_code, outcome, failure_reason)
       VALUES ($1, $2, $3, 'elevation.approved', $4, $5, 12, 500, 'failed', 'http_status') RETURNING id`,
      [subscriptionId, messageId, orgId, attempt, attemptedAt],
    );

  beforeAll(async () => {
    m = await startMedium([WebhookSubscriptionRepository]);
    repo = m.get(WebhookSubscriptionRepository);
    t = await seedTenants(m.owner);
    listed = [
      await arrangeSub(t.orgA2, { createdAt: '2026-01-01T00:00:00Z' }),
      await arrangeSub(t.orgA2, { createdAt: '2026-01-02T00:00:00Z' }),
      await arrangeSub(t.orgA2, { createdAt: '2026-01-03T00:00:00Z' }),
    ];
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (partner_id, url, event_types, enabled, secret, created_at)
       VALUES ($1, 'https://hooks.example/partner', '{api_key.created}', false, 'sealed-partner', '2025-12-31T00:00:00Z') RETURNING id`,
      [t.partnerP],
    );
    partnerSub = rows[0].id;
  });
  afterAll(() => m.close());

  describe('insert, find and sealedSecret', () => {
    it('creates an organization’s subscription, answers it without its secret, and stores the sealed secret and its author', async () => {
      const id = randomUUID();
      const w = write({ eventTypes: ['elevation.approved', 'elevation.denied'], description: 'SIEM' });
      const row = await m.as(asAdminA(), () => repo.insert(id, { orgId: t.orgA, partnerId: null }, w, `sealed-${t.label}`, t.adminA));
      expect(row).toMatchObject({ id, org_id: t.orgA, partner_id: null, url: w.url, event_types: w.eventTypes, enabled: true, description: 'SIEM', failing_since: null });
      expect(row).not.toHaveProperty('secret');
      expect(await m.as(asAdminA(), () => repo.find(id))).toEqual(row);
      expect(await m.as(asAdminA(), () => repo.sealedSecret(id))).toBe(`sealed-${t.label}`);
      expect(await stored(id)).toMatchObject({ secret: `sealed-${t.label}`, previous_secret: null, created_by: t.adminA });
    });

    it('creates a partner’s subscription for a caller reaching every organization of the partner only', async () => {
      const id = randomUUID();
      const row = await m.as(asTech(), () => repo.insert(id, { orgId: null, partnerId: t.partnerP }, write(), 'sealed-p', t.tech));
      expect(row).toMatchObject({ id, partner_id: t.partnerP, org_id: null });
      await expect(m.as(asSelectedTech(), () => repo.insert(randomUUID(), { orgId: null, partnerId: t.partnerP }, write(), 'sealed-p', t.tech))).rejects.toThrow(
        /partner_wide_write_denied/,
      );
      await expect(m.as(asAdminA(), () => repo.insert(randomUUID(), { orgId: null, partnerId: t.partnerP }, write(), 'sealed-p', t.adminA))).rejects.toThrow(/row-level security/);
    });

    it('refuses a subscription in another tenant’s organization, and an event type the table does not know', async () => {
      const id = randomUUID();
      await expect(m.as(asAdminB(), () => repo.insert(id, { orgId: t.orgA, partnerId: null }, write(), 'sealed-x', t.adminB))).rejects.toThrow(/row-level security/);
      await expect(m.as(asAdminA(), () => repo.insert(id, { orgId: t.orgA, partnerId: null }, write({ eventTypes: ['device.exploded'] }), 'sealed-x', null))).rejects.toThrow(
        /check constraint/,
      );
      expect(await stored(id)).toBeUndefined();
    });

    it('shows nothing of another tenant’s subscription, and nothing of a partner’s to a caller reaching only some of its organizations', async () => {
      expect(await m.as(asAdminB(), () => repo.find(listed[0]))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.sealedSecret(listed[0]))).toBeNull();
      expect(await m.as(asSelectedTech(), () => repo.find(partnerSub))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.find(partnerSub))).toBeNull();
      expect(await m.as(asTech(), () => repo.find(partnerSub))).toMatchObject({ id: partnerSub });
      expect(await m.as(asAdminA(), () => repo.find(randomUUID()))).toBeNull();
    });
  });

  describe('list', () => {
    it('pages an organization’s subscriptions in creation order with the total of the filter', async () => {
      const all = await m.as(asAdminA2(), () => repo.list({ orgId: t.orgA2, limit: 10, offset: 0 }));
      expect(all.rows.map((r) => r.id)).toEqual(listed);
      expect(all.total).toBe(3);
      expect(all.rows[0]).not.toHaveProperty('secret');
      const second = await m.as(asAdminA2(), () => repo.list({ orgId: t.orgA2, limit: 1, offset: 1 }));
      expect(second.rows.map((r) => r.id)).toEqual([listed[1]]);
      expect(second.total).toBe(3);
    });

    it('reports the total on a page past the end, and zero when nothing matches', async () => {
      expect(await m.as(asAdminA2(), () => repo.list({ orgId: t.orgA2, limit: 10, offset: 30 }))).toEqual({ rows: [], total: 3 });
      expect(await m.as(asAdminA2(), () => repo.list({ orgId: t.orgA2, scope: 'partner', limit: 10, offset: 0 }))).toEqual({ rows: [], total: 0 });
    });

    it('lists the partner’s subscriptions apart from the organizations’ for a partner-wide caller', async () => {
      const partnerRows = await m.as(asTech(), () => repo.list({ scope: 'partner', limit: 50, offset: 0 }));
      expect(partnerRows.rows.map((r) => r.partner_id)).toEqual(partnerRows.rows.map(() => t.partnerP));
      expect(partnerRows.rows[0].id).toBe(partnerSub);
      const orgRows = await m.as(asTech(), () => repo.list({ scope: 'organization', limit: 50, offset: 0 }));
      expect(orgRows.rows.map((r) => r.org_id)).toEqual(expect.arrayContaining([t.orgA2]));
      expect(orgRows.rows.every((r) => r.org_id === t.orgA || r.org_id === t.orgA2)).toBe(true);
    });

    it('shows nothing of another tenant’s subscriptions, and no partner’s to an organization’s caller', async () => {
      expect(await m.as(asAdminB(), () => repo.list({ orgId: t.orgA2, limit: 10, offset: 0 }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminB(), () => repo.list({ orgId: t.orgA2, limit: 10, offset: 5 }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminA2(), () => repo.list({ scope: 'partner', limit: 10, offset: 0 }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asSelectedTech(), () => repo.list({ scope: 'partner', limit: 10, offset: 0 }))).toEqual({ rows: [], total: 0 });
    });
  });

  describe('lockAndCount', () => {
    it('counts the owner’s subscriptions: an organization’s, or the partner’s own without its organizations’', async () => {
      expect(await m.as(asAdminA2(), () => repo.lockAndCount({ orgId: t.orgA2, partnerId: null }))).toBe(3);
      const partnerCount = (await m.owner.query(`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE partner_id = $1 AND org_id IS NULL`, [t.partnerP])).rows[0].n;
      expect(await m.as(asTech(), () => repo.lockAndCount({ orgId: null, partnerId: t.partnerP }))).toBe(partnerCount);
    });

    it('counts nothing of another tenant', async () => {
      expect(await m.as(asAdminB(), () => repo.lockAndCount({ orgId: t.orgA2, partnerId: null }))).toBe(0);
      expect(await m.as(asAdminB(), () => repo.lockAndCount({ orgId: null, partnerId: t.partnerP }))).toBe(0);
    });

    it('makes a second creation for the same owner wait for the first to commit, and count what it created', async () => {
      const owner = { orgId: t.orgA2, partnerId: null };
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let firstCounted!: () => void;
      const counted = new Promise<void>((resolve) => (firstCounted = resolve));
      const created = randomUUID();
      const first = m.as(asAdminA2(), async () => {
        const n = await repo.lockAndCount(owner);
        await repo.insert(created, owner, write(), 'sealed-race', null);
        firstCounted();
        await gate;
        return n;
      });
      await counted;
      let secondDone = false;
      const second = m.as(asAdminA2(), () => repo.lockAndCount(owner)).finally(() => (secondDone = true));
      // The second transaction waits on the advisory lock the first holds.
      for (;;) {
        const { rows } = await m.owner.query(
          `SELECT 1 FROM pg_locks, hashtextextended('webhook_subscriptions:' || $1::text, 0) AS h
            WHERE locktype = 'advisory' AND NOT granted AND classid::bigint = (h >> 32) & 4294967295 AND objid::bigint = h & 4294967295`,
          [t.orgA2],
        );
        if (rows.length || secondDone) break;
        await new Promise((r) => setImmediate(r));
      }
      expect(secondDone).toBe(false);
      release();
      expect(await first).toBe(3);
      expect(await second).toBe(4);
      await m.owner.query(`DELETE FROM webhook_subscriptions WHERE id = $1`, [created]);
    });
  });

  describe('update and rotate', () => {
    it('records a disabling by hand once, and clears the failure run and the disabling when enabled again', async () => {
      const id = await arrangeSub(t.orgA, { enabled: true, failingSince: '2026-01-01T00:00:00Z' });
      const w = write({ enabled: false, eventTypes: ['elevation.denied'], description: 'paused' });
      const disabled = await m.as(asAdminA(), () => repo.update(id, w));
      expect(disabled).toMatchObject({ id, url: w.url, event_types: ['elevation.denied'], description: 'paused', enabled: false, disabled_reason: 'manual', failing_since: expect.any(Date) });
      const disabledAt = (await stored(id)).disabled_at as Date;
      expect(disabledAt).toBeInstanceOf(Date);
      const again = await m.as(asAdminA(), () => repo.update(id, { ...w, description: 'still paused' }));
      expect(again).toMatchObject({ enabled: false, disabled_reason: 'manual', disabled_at: disabledAt, description: 'still paused' });
      const enabled = await m.as(asAdminA(), () => repo.update(id, { ...w, enabled: true }));
      expect(enabled).toMatchObject({ enabled: true, disabled_at: null, disabled_reason: null, failing_since: null });
      expect(await stored(id)).toMatchObject({ enabled: true, disabled_at: null, failing_since: null, updated_at: expect.any(Date) });
    });

    it('keeps a running failure run while a subscription stays enabled', async () => {
      const id = await arrangeSub(t.orgA, { enabled: true, failingSince: '2026-01-01T00:00:00Z' });
      const row = await m.as(asAdminA(), () => repo.update(id, write()));
      expect(row).toMatchObject({ enabled: true, failing_since: new Date('2026-01-01T00:00:00Z'), disabled_at: null });
    });

    it('rotates the secret, keeping the previous one for the overlap, or none', async () => {
      const id = await arrangeSub(t.orgA);
      const before = Date.now();
      const row = await m.as(asAdminA(), () => repo.rotate(id, 'sealed-new', 'sealed-arranged', 60));
      expect(row).not.toHaveProperty('secret');
      expect(row!.secret_rotated_at).toBeInstanceOf(Date);
      const expires = row!.previous_secret_expires_at!.getTime();
      expect(expires).toBeGreaterThan(before + 50 * 60_000);
      expect(await stored(id)).toMatchObject({ secret: 'sealed-new', previous_secret: 'sealed-arranged' });
      const plain = await m.as(asAdminA(), () => repo.rotate(id, 'sealed-newer', null, 60));
      expect(plain!.previous_secret_expires_at).toBeNull();
      expect(await stored(id)).toMatchObject({ secret: 'sealed-newer', previous_secret: null, previous_secret_expires_at: null });
    });

    it('changes nothing of a missing subscription, another tenant’s, or a partner’s for a caller reaching only some of its organizations', async () => {
      expect(await m.as(asAdminA(), () => repo.update(randomUUID(), write()))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.rotate(randomUUID(), 'sealed-x', null, 60))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.update(listed[0], write({ url: 'https://hijacked.example/' })))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.rotate(listed[0], 'sealed-hijack', null, 60))).toBeNull();
      expect(await m.as(asSelectedTech(), () => repo.update(partnerSub, write({ url: 'https://hijacked.example/' })))).toBeNull();
      expect(await stored(listed[0])).toMatchObject({ url: `https://hooks.example/${t.label}/arranged`, secret: 'sealed-arranged' });
      expect(await stored(partnerSub)).toMatchObject({ url: 'https://hooks.example/partner' });
    });
  });

  describe('deliveries and redeliver', () => {
    let sub: string;
    let first: string;
    let second: string;
    let logIds: string[];

    beforeAll(async () => {
      sub = await arrangeSub(t.orgA);
      first = await arrangeMessage(sub, t.orgA);
      second = await arrangeMessage(sub, t.orgA);
      logIds = [];
      for (const [message, attempt, at] of [
        [first, 1, '2026-02-01T00:00:00Z'],
        [first, 2, '2026-02-01T00:05:00Z'],
        [second, 1, '2026-02-01T00:03:00Z'],
      ] as const) {
        logIds.push((await arrangeDelivery(sub, message, t.orgA, attempt, at)).rows[0].id);
      }
    });

    it('lists the log newest first, by message, in pages with the total', async () => {
      const all = await m.as(asAdminA(), () => repo.deliveries(sub, { limit: 10, offset: 0 }));
      expect(all.rows.map((r) => r.id)).toEqual([logIds[1], logIds[2], logIds[0]]);
      expect(all.total).toBe(3);
      expect(all.rows[0]).toMatchObject({ message_id: first, attempt: 2, outcome: 'failed', status_code: 500, failure_reason: 'http_status', manual: false });
      const ofFirst = await m.as(asAdminA(), () => repo.deliveries(sub, { messageId: first, limit: 1, offset: 1 }));
      expect(ofFirst).toEqual({ rows: [expect.objectContaining({ id: logIds[0] })], total: 2 });
      expect(await m.as(asAdminA(), () => repo.deliveries(sub, { messageId: first, limit: 10, offset: 10 }))).toEqual({ rows: [], total: 2 });
      expect(await m.as(asAdminA(), () => repo.deliveries(sub, { messageId: randomUUID(), limit: 10, offset: 0 }))).toEqual({ rows: [], total: 0 });
    });

    it('queues a message again under the same id with a fresh window, to be logged as manual', async () => {
      const row = await m.as(asAdminA(), () => repo.redeliver(sub, second, 24));
      expect(row).toMatchObject({ id: second, status: 'pending', attempts: 3 });
      expect(row!.retry_until.getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
      const s = (await m.owner.query(`SELECT status, manual, attempts, next_attempt_at <= now() AS due FROM webhook_messages WHERE id = $1`, [second])).rows[0];
      expect(s).toEqual({ status: 'pending', manual: true, attempts: 3, due: true });
    });

    it('queues nothing for a message of another subscription or a missing one', async () => {
      const other = await arrangeSub(t.orgA);
      const theirs = await arrangeMessage(other, t.orgA);
      expect(await m.as(asAdminA(), () => repo.redeliver(sub, theirs, 24))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.redeliver(sub, randomUUID(), 24))).toBeNull();
      expect((await m.owner.query(`SELECT status, manual FROM webhook_messages WHERE id = $1`, [theirs])).rows[0]).toEqual({ status: 'dead', manual: false });
    });

    it('shows and queues nothing for another tenant', async () => {
      expect(await m.as(asAdminB(), () => repo.deliveries(sub, { limit: 10, offset: 0 }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminB(), () => repo.deliveries(sub, { limit: 10, offset: 5 }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminB(), () => repo.redeliver(sub, first, 24))).toBeNull();
      expect((await m.owner.query(`SELECT status FROM webhook_messages WHERE id = $1`, [first])).rows[0].status).toBe('dead');
    });
  });

  describe('delete', () => {
    it('deletes a subscription with its messages and its delivery log, and only those', async () => {
      const sub = await arrangeSub(t.orgA);
      const message = await arrangeMessage(sub, t.orgA);
      await arrangeDelivery(sub, message, t.orgA, 1, '2026-02-01T00:00:00Z');
      const kept = await arrangeSub(t.orgA);
      const keptMessage = await arrangeMessage(kept, t.orgA);
      expect(await m.as(asAdminA(), () => repo.delete(sub))).toBe(1);
      expect(await stored(sub)).toBeUndefined();
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM webhook_messages WHERE subscription_id = $1`, [sub])).rows[0].n).toBe(0);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`, [sub])).rows[0].n).toBe(0);
      expect((await m.owner.query(`SELECT id FROM webhook_messages WHERE id = $1`, [keptMessage])).rows).toHaveLength(1);
      expect(await m.as(asAdminA(), () => repo.delete(sub))).toBe(0);
    });

    it('deletes nothing of another tenant, not even its messages', async () => {
      const sub = await arrangeSub(t.orgA);
      const message = await arrangeMessage(sub, t.orgA);
      expect(await m.as(asAdminB(), () => repo.delete(sub))).toBe(0);
      expect(await m.as(asSelectedTech(), () => repo.delete(partnerSub))).toBe(0);
      expect(await stored(sub)).toBeDefined();
      expect(await stored(partnerSub)).toBeDefined();
      expect((await m.owner.query(`SELECT id FROM webhook_messages WHERE id = $1`, [message])).rows).toHaveLength(1);
    });
  });
});
