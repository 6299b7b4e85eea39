import { randomUUID } from 'node:crypto';
import { SYSTEM_SCOPE } from '../../../src/infra/database/tenant-scope';
import { type AttemptOutcome, WebhookDeliveryRepository } from '../../../src/modules/webhooks/webhook-delivery.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

const LEASE = 3600;
/** Before any message another file of the run queues: claims, ordered by next attempt, take this file's first. */
const LONG_AGO = '2000-01-01T00:00:00Z';

/**
 * The delivery worker's outbox statements, in system context as the worker runs them. The outbox is
 * shared by every file of the run and a claim serves every tenant, so the messages claimed here are
 * due since long ago (the oldest, claimed first, and only as many as a test asks for), leased for an
 * hour, and their subscriptions are disabled when the file ends.
 */
describe('WebhookDeliveryRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: WebhookDeliveryRepository;

  const subscription = async (orgId: string, over: { enabled?: boolean; previous?: 'live' | 'expired'; failingSince?: string } = {}) => {
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (org_id, url, event_types, enabled, secret, previous_secret, previous_secret_expires_at, failing_since)
       VALUES ($1, $2, '{elevation.approved}', $3, 'sealed-current', CASE WHEN $4::text IS NOT NULL THEN 'sealed-previous' END,
               CASE $4::text WHEN 'live' THEN now() + interval '1 hour' WHEN 'expired' THEN now() - interval '1 minute' END, $5)
       RETURNING id`,
      [orgId, `https://receiver-${t.label}.invalid/hook`, over.enabled ?? true, over.previous ?? null, over.failingSince ?? null],
    );
    return rows[0].id;
  };
  const message = async (subscriptionId: string, orgId: string, over: { status?: string; nextAttemptAt?: string; createdAt?: string; manual?: boolean } = {}) => {
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO webhook_messages (subscription_id, org_id, event_type, payload, status, next_attempt_at, manual, created_at)
       VALUES ($1, $2, 'elevation.approved', '{"n":1}', $3, $4, $5, coalesce($6::timestamptz, now())) RETURNING id`,
      [subscriptionId, orgId, over.status ?? 'pending', over.nextAttemptAt ?? LONG_AGO, over.manual ?? false, over.createdAt ?? null],
    );
    return rows[0].id;
  };
  const storedMessage = async (id: string) =>
    (await m.owner.query(`SELECT status, attempts, manual, next_attempt_at, last_attempt_at, delivered_at FROM webhook_messages WHERE id = $1`, [id])).rows[0];
  const outcome = (id: string, subscriptionId: string, over: Partial<AttemptOutcome>): AttemptOutcome => ({
    id,
    subscriptionId,
    partnerId: null,
    orgId: t.orgA,
    eventType: 'elevation.approved',
    attempt: 1,
    manual: false,
    attemptedAt: new Date(),
    durationMs: 40,
    statusCode: 200,
    kind: 'delivered',
    nextAttemptAt: null,
    failureReason: null,
    failureMessage: null,
    ...over,
  });

  beforeAll(async () => {
    m = await startMedium([WebhookDeliveryRepository]);
    repo = m.get(WebhookDeliveryRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(async () => {
    await m.owner.query(`UPDATE webhook_subscriptions SET enabled = false WHERE org_id = ANY ($1::uuid[])`, [[t.orgA, t.orgA2, t.orgB]]);
    await m.close();
  });

  describe('claim', () => {
    it('claims the oldest due messages of enabled subscriptions, counting the attempt and leasing each, with the subscription’s URL and secrets', async () => {
      const sub = await subscription(t.orgA, { previous: 'live' });
      const older = await message(sub, t.orgA, { nextAttemptAt: '1999-12-31T00:00:00Z', manual: true });
      const newer = await message(sub, t.orgA);
      const before = Date.now();
      const claimed = await m.system(() => repo.claim(2, 10, [], LEASE));
      expect(claimed.map((c) => c.id)).toEqual(expect.arrayContaining([older, newer]));
      expect(claimed).toHaveLength(2);
      expect(claimed.find((c) => c.id === older)).toMatchObject({
        subscription_id: sub,
        org_id: t.orgA,
        partner_id: null,
        event_type: 'elevation.approved',
        payload: { n: 1 },
        attempts: 1,
        manual: true,
        url: `https://receiver-${t.label}.invalid/hook`,
        secret: 'sealed-current',
        previous_secret: 'sealed-previous',
      });
      const stored = await storedMessage(older);
      expect(stored).toMatchObject({ status: 'pending', attempts: 1, last_attempt_at: expect.any(Date) });
      expect(stored.next_attempt_at.getTime()).toBeGreaterThan(before + (LEASE - 60) * 1000);
    });

    it('leaves out the previous secret once its overlap is over', async () => {
      const sub = await subscription(t.orgA, { previous: 'expired' });
      const id = await message(sub, t.orgA);
      const [claimed] = await m.system(() => repo.claim(1, 10, [], LEASE));
      expect(claimed).toMatchObject({ id, secret: 'sealed-current', previous_secret: null });
    });

    it('claims a message again, with the same id, only once its lease has ended', async () => {
      const sub = await subscription(t.orgA);
      const id = await message(sub, t.orgA);
      expect((await m.system(() => repo.claim(1, 10, [], LEASE))).map((c) => c.id)).toEqual([id]);
      // Rolled back: a claim of every due message would otherwise lease other files' messages.
      const next = await m.tryAs(SYSTEM_SCOPE, () => repo.claim(500, 10, [], LEASE));
      expect(next.map((c) => c.id)).not.toContain(id);
      // The worker died mid-send: its lease runs out.
      await m.owner.query(`UPDATE webhook_messages SET next_attempt_at = $2 WHERE id = $1`, [id, LONG_AGO]);
      expect(await m.system(() => repo.claim(1, 10, [], LEASE))).toEqual([expect.objectContaining({ id, attempts: 2 })]);
    });

    it('claims nothing of a disabled or skipped subscription, nor a message that is not pending or not yet due', async () => {
      const disabled = await subscription(t.orgA, { enabled: false });
      const skipped = await subscription(t.orgA);
      const open = await subscription(t.orgA);
      const untouched = [
        await message(disabled, t.orgA, { nextAttemptAt: '1990-01-01T00:00:00Z' }),
        await message(skipped, t.orgA, { nextAttemptAt: '1990-01-01T00:00:00Z' }),
        await message(open, t.orgA, { status: 'dead', nextAttemptAt: '1990-01-01T00:00:00Z' }),
        await message(open, t.orgA, { status: 'delivered', nextAttemptAt: '1990-01-01T00:00:00Z' }),
        await message(open, t.orgA, { nextAttemptAt: new Date(Date.now() + 3600_000).toISOString() }),
      ];
      const due = await message(open, t.orgA);
      expect((await m.system(() => repo.claim(1, 10, [skipped], LEASE))).map((c) => c.id)).toEqual([due]);
      for (const id of untouched) expect((await storedMessage(id)).attempts).toBe(0);
      await m.owner.query(`UPDATE webhook_messages SET status = 'dead' WHERE subscription_id = $1`, [skipped]);
    });

    it('claims at most the given number of messages of one subscription per call', async () => {
      const busy = await subscription(t.orgA);
      const calm = await subscription(t.orgA);
      const busyIds = [await message(busy, t.orgA, { nextAttemptAt: '1999-01-01T00:00:00Z' }), await message(busy, t.orgA, { nextAttemptAt: '1999-01-02T00:00:00Z' })];
      const calmId = await message(calm, t.orgA);
      const claimed = (await m.system(() => repo.claim(2, 1, [], LEASE))).map((c) => c.id);
      expect(claimed.sort()).toEqual([busyIds[0], calmId].sort());
      expect((await storedMessage(busyIds[1])).attempts).toBe(0);
      expect((await m.system(() => repo.claim(1, 1, [], LEASE))).map((c) => c.id)).toEqual([busyIds[1]]);
    });

    it('never gives two claimers in parallel the same message', async () => {
      const subs = [await subscription(t.orgA), await subscription(t.orgA2)];
      const ids = [
        await message(subs[0], t.orgA, { nextAttemptAt: '1999-01-01T00:00:00Z' }),
        await message(subs[1], t.orgA2, { nextAttemptAt: '1999-01-02T00:00:00Z' }),
        await message(subs[0], t.orgA, { nextAttemptAt: '1999-01-03T00:00:00Z' }),
        await message(subs[1], t.orgA2, { nextAttemptAt: '1999-01-04T00:00:00Z' }),
      ];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let firstClaimed!: (ids: string[]) => void;
      const firstIds = new Promise<string[]>((resolve) => (firstClaimed = resolve));
      // The first claimer keeps its transaction, and the rows it claimed locked, until the second has claimed.
      const first = m.system(async () => {
        firstClaimed((await repo.claim(2, 10, [], LEASE)).map((c) => c.id));
        await gate;
      });
      const a = await firstIds;
      const b = (await m.system(() => repo.claim(2, 10, [], LEASE))).map((c) => c.id);
      release();
      await first;
      expect(a).toHaveLength(2);
      expect(b).toHaveLength(2);
      expect([...a, ...b].sort()).toEqual([...ids].sort());
      for (const id of ids) expect((await storedMessage(id)).attempts).toBe(1);
    });

    it('claims nothing of another tenant when run under a tenant’s scope', async () => {
      const sub = await subscription(t.orgA);
      const id = await message(sub, t.orgA);
      expect(await m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => repo.claim(50, 10, [], LEASE))).toEqual([]);
      expect((await storedMessage(id)).attempts).toBe(0);
      await m.owner.query(`UPDATE webhook_messages SET status = 'dead' WHERE id = $1`, [id]);
    });
  });

  describe('record', () => {
    it('records a delivery: the message delivered and no longer manual, a log row, and the failure run ended', async () => {
      const sub = await subscription(t.orgA, { failingSince: new Date(Date.now() - 3600_000).toISOString() });
      const id = await message(sub, t.orgA, { status: 'pending', nextAttemptAt: new Date(Date.now() + 3600_000).toISOString(), manual: true });
      const at = new Date();
      expect(await m.system(() => repo.record([outcome(id, sub, { attemptedAt: at, manual: true, attempt: 3 })], 24))).toEqual([]);
      expect(await storedMessage(id)).toMatchObject({ status: 'delivered', manual: false, delivered_at: at });
      const log = (await m.owner.query(`SELECT * FROM webhook_deliveries WHERE message_id = $1`, [id])).rows;
      expect(log).toEqual([
        expect.objectContaining({ subscription_id: sub, org_id: t.orgA, attempt: 3, manual: true, attempted_at: at, duration_ms: 40, status_code: 200, outcome: 'delivered', failure_reason: null }),
      ]);
      expect((await m.owner.query(`SELECT failing_since FROM webhook_subscriptions WHERE id = $1`, [sub])).rows[0].failing_since).toBeNull();
    });

    it('records a retry for later and a message given up, starting the failure run at the first failure and keeping it after', async () => {
      const sub = await subscription(t.orgA);
      const [retried, given] = [await message(sub, t.orgA, { nextAttemptAt: '2999-01-01T00:00:00Z' }), await message(sub, t.orgA, { nextAttemptAt: '2999-01-01T00:00:00Z' })];
      const first = new Date(Date.now() - 2000);
      const later = new Date(Date.now() + 600_000);
      const failed = { statusCode: 503, failureReason: 'http_status', failureMessage: 'The receiver answered 503' };
      await m.system(() =>
        repo.record(
          [outcome(retried, sub, { ...failed, kind: 'retry', nextAttemptAt: later, attemptedAt: new Date() }), outcome(given, sub, { ...failed, kind: 'dead', attemptedAt: first })],
          24,
        ),
      );
      expect(await storedMessage(retried)).toMatchObject({ status: 'pending', next_attempt_at: later, delivered_at: null });
      expect(await storedMessage(given)).toMatchObject({ status: 'dead', delivered_at: null });
      const log = (await m.owner.query(`SELECT outcome, status_code, failure_reason, failure_message FROM webhook_deliveries WHERE subscription_id = $1`, [sub])).rows;
      expect(log).toEqual([
        { outcome: 'failed', status_code: 503, failure_reason: 'http_status', failure_message: 'The receiver answered 503' },
        { outcome: 'failed', status_code: 503, failure_reason: 'http_status', failure_message: 'The receiver answered 503' },
      ]);
      const failingSince = async () => (await m.owner.query(`SELECT failing_since FROM webhook_subscriptions WHERE id = $1`, [sub])).rows[0].failing_since;
      expect(await failingSince()).toEqual(first);
      await m.system(() => repo.record([outcome(retried, sub, { ...failed, kind: 'retry', nextAttemptAt: later })], 24));
      expect(await failingSince()).toEqual(first);
    });

    it('ends the failure run when a batch holds a success beside failures of the same subscription', async () => {
      const sub = await subscription(t.orgA, { failingSince: new Date(Date.now() - 3600_000).toISOString() });
      const [ok, ko] = [await message(sub, t.orgA, { nextAttemptAt: '2999-01-01T00:00:00Z' }), await message(sub, t.orgA, { nextAttemptAt: '2999-01-01T00:00:00Z' })];
      const disabled = await m.system(() => repo.record([outcome(ko, sub, { kind: 'retry', statusCode: 500, nextAttemptAt: new Date(Date.now() + 60_000) }), outcome(ok, sub, {})], 0));
      expect(disabled).toEqual([]);
      expect((await m.owner.query(`SELECT failing_since, enabled FROM webhook_subscriptions WHERE id = $1`, [sub])).rows[0]).toEqual({ failing_since: null, enabled: true });
    });

    it('disables and returns a subscription whose every attempt has failed for the given hours, and no other', async () => {
      const since = new Date(Date.now() - 25 * 3600_000);
      const long = await subscription(t.orgA2, { failingSince: since.toISOString() });
      const fresh = await subscription(t.orgA2);
      const [a, b] = [await message(long, t.orgA2, { nextAttemptAt: '2999-01-01T00:00:00Z' }), await message(fresh, t.orgA2, { nextAttemptAt: '2999-01-01T00:00:00Z' })];
      const failure = { kind: 'retry' as const, orgId: t.orgA2, statusCode: null, failureReason: 'timeout', nextAttemptAt: new Date(Date.now() + 60_000) };
      const disabled = await m.system(() => repo.record([outcome(a, long, failure), outcome(b, fresh, failure)], 24));
      expect(disabled).toEqual([{ id: long, org_id: t.orgA2, partner_id: null, failing_since: since }]);
      const stored = (await m.owner.query(`SELECT id, enabled, disabled_reason, disabled_at IS NOT NULL AS dated FROM webhook_subscriptions WHERE id = ANY ($1::uuid[]) ORDER BY id = $2 DESC`, [[long, fresh], long]))
        .rows;
      expect(stored).toEqual([
        { id: long, enabled: false, disabled_reason: 'failing_24h', dated: true },
        { id: fresh, enabled: true, disabled_reason: null, dated: false },
      ]);
      // Already disabled: not returned a second time.
      expect(await m.system(() => repo.record([outcome(a, long, failure)], 24))).toEqual([]);
    });

    it('writes nothing for an empty batch', async () => {
      const sub = await subscription(t.orgA);
      expect(await m.system(() => repo.record([], 24))).toEqual([]);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`, [sub])).rows[0].n).toBe(0);
    });

    it('refuses to write another tenant’s log when run under a tenant’s scope, and changes none of its messages', async () => {
      const sub = await subscription(t.orgA);
      const id = await message(sub, t.orgA, { nextAttemptAt: '2999-01-01T00:00:00Z' });
      await expect(m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => repo.record([outcome(id, sub, {})], 24))).rejects.toThrow(/row-level security/);
      expect(await storedMessage(id)).toMatchObject({ status: 'pending', delivered_at: null });
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE message_id = $1`, [id])).rows[0].n).toBe(0);
    });
  });

  describe('prune and backlog', () => {
    it('removes old delivered and dead messages, old log rows and orphaned pending messages, at most a batch of each per call', async () => {
      const sub = await subscription(t.orgA, { enabled: false });
      const ancient = '2001-01-01T00:00:00Z';
      const old = [
        await message(sub, t.orgA, { status: 'delivered', createdAt: ancient, nextAttemptAt: ancient }),
        await message(sub, t.orgA, { status: 'dead', createdAt: ancient, nextAttemptAt: ancient }),
      ];
      const kept = [
        await message(sub, t.orgA, { status: 'pending', createdAt: ancient, nextAttemptAt: '2999-01-01T00:00:00Z' }),
        await message(sub, t.orgA, { status: 'delivered', nextAttemptAt: ancient }),
      ];
      const gone = randomUUID();
      const orphan = await message(gone, t.orgA, { createdAt: new Date(Date.now() - 2 * 3600_000).toISOString(), nextAttemptAt: '2999-01-01T00:00:00Z' });
      const youngOrphan = await message(gone, t.orgA, { nextAttemptAt: '2999-01-01T00:00:00Z' });
      const { rows: logs } = await m.owner.query<{ id: string; old: boolean }>(
        `INSERT INTO webhook_deliveries (subscription_id, message_id, org_id, event_type, attempt, attempted_at, duration_ms, outcome)
         VALUES ($1, $2, $3, 'elevation.approved', 1, $4, 5, 'delivered'), ($1, $2, $3, 'elevation.approved', 2, now(), 5, 'delivered') RETURNING id, attempted_at < now() - interval '1 day' AS old`,
        [sub, kept[1], t.orgA, ancient],
      );
      const days = 365 * 20;
      const mine = async () =>
        (await m.owner.query<{ id: string }>(`SELECT id FROM webhook_messages WHERE id = ANY ($1::uuid[]) UNION ALL SELECT id FROM webhook_deliveries WHERE id = ANY ($2::uuid[])`, [
          [...old, ...kept, orphan, youngOrphan],
          logs.map((l) => l.id),
        ])).rows.map((r) => r.id);
      // A batch of one per kind: three rows at most, whoever's they are.
      const once = await m.system(() => repo.prune(days, 1));
      expect(once).toBeGreaterThanOrEqual(1);
      expect(once).toBeLessThanOrEqual(3);
      for (let rounds = 0; rounds < 20 && (await m.system(() => repo.prune(days, 1))) > 0; rounds++);
      expect((await mine()).sort()).toEqual([...kept, youngOrphan, logs.find((l) => !l.old)!.id].sort());
    });

    it('counts waiting and given-up messages, across every tenant in system context and of its own under a tenant’s scope', async () => {
      const sub = await subscription(t.orgA2, { enabled: false });
      const far = '2999-01-01T00:00:00Z';
      for (const status of ['pending', 'pending', 'dead', 'delivered']) await message(sub, t.orgA2, { status, nextAttemptAt: far });
      const own = await m.as(orgPrincipal(t.orgA2), () => repo.backlog());
      const ownStored = (
        await m.owner.query(`SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'dead')::int AS dead FROM webhook_messages WHERE org_id = $1`, [t.orgA2])
      ).rows[0];
      expect(own).toEqual(ownStored);
      expect(own.pending).toBeGreaterThanOrEqual(2);
      expect(own.dead).toBeGreaterThanOrEqual(1);
      const all = await m.system(() => repo.backlog());
      expect(all.pending).toBeGreaterThanOrEqual(own.pending);
      expect(all.dead).toBeGreaterThanOrEqual(own.dead);
      expect(await m.as(orgPrincipal(t.orgB), () => repo.backlog())).toEqual({ pending: 0, dead: 0 });
    });
  });
});
