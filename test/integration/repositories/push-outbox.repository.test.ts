import { randomBytes, randomUUID } from 'node:crypto';
import { SYSTEM_SCOPE } from '../../../src/infra/database/tenant-scope';
import { PushOutboxRepository } from '../../../src/modules/pam/approvals/push/push-outbox.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, withdrawPushes, type TenantRows } from '../../support/medium/tenant-rows';

const LEASE = 3600;

/**
 * The push worker's outbox statements, in system context as the worker runs them. The outbox is
 * shared by every file of the run and a claim serves every organization, so the pushes claimed here
 * are due since long ago (the oldest, claimed first, and only as many as a test asks for), leased
 * for an hour, and whatever is left pending is cancelled after each test.
 */
describe('PushOutboxRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: PushOutboxRepository;
  let phone: string;
  let pushToken: string;

  /** An approval request of adminA for a new pending elevation request on device A1 (or as told). */
  const approval = async (over: { orgId?: string; siteId?: string; deviceId?: string; approver?: string; status?: string; expiresIn?: string } = {}) => {
    const orgId = over.orgId ?? t.orgA;
    const request = await insertRequest(m.owner, { orgId, siteId: over.siteId ?? t.siteA1, deviceId: over.deviceId ?? t.deviceA1, path: `C:\\Tools\\${t.label}.exe` });
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, status, expires_at) VALUES ($1, $2, $3, $4, now() + $5::interval) RETURNING id`,
      [orgId, request, over.approver ?? t.adminA, over.status ?? 'pending', over.expiresIn ?? '10 minutes'],
    );
    return { orgId, request, approval: rows[0].id };
  };
  const push = async (a: { orgId: string; approval: string }, over: { nextAttemptAt?: string; status?: string; device?: string } = {}) => {
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO push_outbox (org_id, approval_request_id, mobile_device_id, status, next_attempt_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [a.orgId, a.approval, over.device ?? phone, over.status ?? 'pending', over.nextAttemptAt ?? '2000-01-01T00:00:00Z'],
    );
    return rows[0].id;
  };
  const stored = async (id: string) => (await m.owner.query(`SELECT status, attempts, next_attempt_at, delivered_at, last_error FROM push_outbox WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([PushOutboxRepository]);
    repo = m.get(PushOutboxRepository);
    t = await seedTenants(m.owner);
    phone = randomUUID();
    pushToken = `sealed-${t.label}`;
    await m.owner.query(`INSERT INTO mobile_devices (id, user_id, platform, push_token, push_token_hmac) VALUES ($1, $2, 'android', $3, $4)`, [phone, t.adminA, pushToken, randomBytes(16).toString('hex')]);
  });
  afterEach(() => withdrawPushes(m.owner, t));
  afterAll(() => m.close());

  describe('claim', () => {
    it('claims the oldest due pushes, counting the attempt and leasing each, with what the notification shows', async () => {
      const a = await approval();
      const older = await push(a, { nextAttemptAt: '1999-12-31T00:00:00Z' });
      const newer = await push(a);
      const before = Date.now();
      const claimed = await m.system(() => repo.claim(2, LEASE));
      expect(claimed.map((c) => c.id).sort()).toEqual([older, newer].sort());
      expect(claimed.find((c) => c.id === older)).toEqual({
        id: older,
        attempts: 1,
        approval_request_id: a.approval,
        elevation_request_id: a.request,
        org_id: t.orgA,
        deliverable: true,
        approval_expires_at: expect.any(Date),
        mobile_device_id: phone,
        platform: 'android',
        push_token: pushToken,
        device_hostname: `WS-A1-${t.label}`,
        flow_type: 'uac_intercept',
        target_executable_path: `C:\\Tools\\${t.label}.exe`,
        tool_name: null,
      });
      const s = await stored(older);
      expect(s).toMatchObject({ status: 'pending', attempts: 1 });
      expect(s.next_attempt_at.getTime()).toBeGreaterThan(before + (LEASE - 60) * 1000);
    });

    it('marks a push of a decided or lapsed approval request as not deliverable', async () => {
      const decided = await push(await approval({ status: 'approved' }), { nextAttemptAt: '1999-01-01T00:00:00Z' });
      const lapsed = await push(await approval({ expiresIn: '-1 minute' }), { nextAttemptAt: '1999-01-02T00:00:00Z' });
      const claimed = await m.system(() => repo.claim(2, LEASE));
      expect(claimed.map((c) => [c.id, c.deliverable])).toEqual(expect.arrayContaining([
        [decided, false],
        [lapsed, false],
      ]));
      expect(claimed).toHaveLength(2);
    });

    it('claims a push again only once its lease has ended, and never one that is no longer pending or not yet due', async () => {
      const a = await approval();
      const id = await push(a);
      const done = await push(a, { status: 'delivered', nextAttemptAt: '1990-01-01T00:00:00Z' });
      const later = await push(a, { nextAttemptAt: new Date(Date.now() + 3600_000).toISOString() });
      expect((await m.system(() => repo.claim(1, LEASE))).map((c) => c.id)).toEqual([id]);
      // Rolled back: a claim of every due push would otherwise lease other files' pushes.
      const rest = (await m.tryAs(SYSTEM_SCOPE, () => repo.claim(500, LEASE))).map((c) => c.id);
      expect(rest).not.toContain(id);
      expect(rest).not.toContain(done);
      expect(rest).not.toContain(later);
      // The worker died mid-send: its lease runs out.
      await m.owner.query(`UPDATE push_outbox SET next_attempt_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [id]);
      expect(await m.system(() => repo.claim(1, LEASE))).toEqual([expect.objectContaining({ id, attempts: 2 })]);
      expect((await stored(done)).attempts).toBe(0);
      expect((await stored(later)).attempts).toBe(0);
    });

    it('never gives two claimers in parallel the same push', async () => {
      const a = await approval();
      const ids = [];
      for (const day of ['01', '02', '03', '04']) ids.push(await push(a, { nextAttemptAt: `1999-01-${day}T00:00:00Z` }));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let firstClaimed!: (ids: string[]) => void;
      const firstIds = new Promise<string[]>((resolve) => (firstClaimed = resolve));
      // The first claimer keeps its transaction, and the rows it claimed locked, until the second has claimed.
      const first = m.system(async () => {
        firstClaimed((await repo.claim(2, LEASE)).map((c) => c.id));
        await gate;
      });
      const one = await firstIds;
      const two = (await m.system(() => repo.claim(2, LEASE))).map((c) => c.id);
      release();
      await first;
      // Which pushes, not in what order: a claim hands out the oldest due, and its answer comes in no set order.
      expect([...one].sort()).toEqual(ids.slice(0, 2).sort());
      expect([...two].sort()).toEqual(ids.slice(2).sort());
      for (const id of ids) expect((await stored(id)).attempts).toBe(1);
    });

    it('claims nothing of another organization when run under a tenant’s scope', async () => {
      const id = await push(await approval());
      expect(await m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => repo.claim(50, LEASE))).toEqual([]);
      expect((await stored(id)).attempts).toBe(0);
    });
  });

  describe('record', () => {
    it('records each outcome: delivered, retried after its delay, failed, cancelled', async () => {
      const a = await approval();
      const far = new Date(Date.now() + 3600_000).toISOString();
      const [delivered, retried, failed, cancelled] = [await push(a, { nextAttemptAt: far }), await push(a, { nextAttemptAt: far }), await push(a, { nextAttemptAt: far }), await push(a, { nextAttemptAt: far })];
      const before = Date.now();
      await m.system(() =>
        repo.record([
          { id: delivered, kind: 'delivered' },
          { id: retried, kind: 'retry', delaySeconds: 120, error: 'gateway 503' },
          { id: failed, kind: 'failed', error: 'x'.repeat(600) },
          { id: cancelled, kind: 'cancelled', error: 'approval request decided' },
        ]),
      );
      expect(await stored(delivered)).toMatchObject({ status: 'delivered', delivered_at: expect.any(Date), last_error: null });
      const r = await stored(retried);
      expect(r).toMatchObject({ status: 'pending', delivered_at: null, last_error: 'gateway 503' });
      expect(r.next_attempt_at.getTime()).toBeGreaterThan(before + 100_000);
      expect(r.next_attempt_at.getTime()).toBeLessThan(before + 3000_000);
      expect(await stored(failed)).toMatchObject({ status: 'failed', last_error: 'x'.repeat(500) });
      expect(await stored(cancelled)).toMatchObject({ status: 'cancelled', last_error: 'approval request decided' });
    });

    it('changes nothing of a push that is no longer pending, and nothing for an empty batch', async () => {
      const a = await approval();
      const cancelled = await push(a, { status: 'cancelled' });
      await m.system(() => repo.record([{ id: cancelled, kind: 'delivered' }]));
      expect(await stored(cancelled)).toMatchObject({ status: 'cancelled', delivered_at: null });
      await m.system(() => repo.record([]));
      await m.system(() => repo.record([{ id: randomUUID(), kind: 'delivered' }]));
    });

    it('changes nothing of another organization’s push when run under a tenant’s scope', async () => {
      const id = await push(await approval(), { nextAttemptAt: new Date(Date.now() + 3600_000).toISOString() });
      await m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => repo.record([{ id, kind: 'failed', error: 'planted' }]));
      expect(await stored(id)).toMatchObject({ status: 'pending', last_error: null });
    });
  });

  describe('backlog', () => {
    it('counts pushes waiting and pushes that ran out of attempts, across every organization in system context and of its own under a tenant’s scope', async () => {
      const a2 = await approval({ orgId: t.orgA2, siteId: t.siteX1, deviceId: t.deviceX1 });
      const far = new Date(Date.now() + 3600_000).toISOString();
      for (const status of ['pending', 'pending', 'failed', 'delivered', 'cancelled']) await push(a2, { status, nextAttemptAt: far });
      const own = await m.as(orgPrincipal(t.orgA2), () => repo.backlog());
      expect(own).toEqual({ pending: 2, failed: 1 });
      const all = await m.system(() => repo.backlog());
      expect(all.pending).toBeGreaterThanOrEqual(2);
      expect(all.failed).toBeGreaterThanOrEqual(1);
      expect(await m.as(orgPrincipal(t.orgB), () => repo.backlog())).toEqual({ pending: 0, failed: 0 });
    });
  });
});
