import { ElevationRequestRepository, type ElevationRequestFilter } from '../../../src/modules/pam/requests/elevation-request.repository';
import { startMedium, orgPrincipal, partnerPrincipal, type Medium } from '../../support/medium/medium-harness';
import type { TenantScope } from '../../../src/infra/database/tenant-scope';
import { insertRequest, seedTenants, type RequestRow, type TenantRows } from '../../support/medium/tenant-rows';

const TTL = 60;

/**
 * The request queue's SQL (list with filters, exact totals and pages; the compare-and-swap
 * transitions; the expiry sweep) against the real schema, through the request role.
 */
describe('ElevationRequestRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: ElevationRequestRepository;
  /** Requests of organization A by name, and organization A2nd's and B's. */
  const r: Record<string, string> = {};

  const filter = (f: Partial<ElevationRequestFilter> = {}): ElevationRequestFilter => ({ orgIds: [t.orgA], siteIds: null, ...f });
  const ids = (rows: { id: string }[]) => rows.map((x) => x.id);

  beforeAll(async () => {
    m = await startMedium([ElevationRequestRepository]);
    repo = m.get(ElevationRequestRepository);
    t = await seedTenants(m.owner);
    const a1 = { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1 };
    const a2 = { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2 };
    // Oldest first, so the list's newest-first order is the reverse of this one. The rows past a
    // deadline may be swept by other files meanwhile: their effective status stays the same.
    r.deniedOld = await insertRequest(m.owner, { ...a1, status: 'denied', minutesAgo: 300 });
    r.pendingLapsed = await insertRequest(m.owner, { ...a1, status: 'pending', minutesAgo: TTL + 30 });
    r.approvedEnded = await insertRequest(m.owner, { ...a2, status: 'approved', minutesAgo: 90, expiresInMinutes: -5 });
    r.expiredStored = await insertRequest(m.owner, { ...a2, status: 'expired', minutesAgo: 80 });
    r.jit = await insertRequest(m.owner, { ...a1, status: 'approved', flowType: 'tech_jit_admin', minutesAgo: 20 });
    r.pendingA2 = await insertRequest(m.owner, { ...a2, status: 'pending', minutesAgo: 10 / 60 });
    r.pendingA1 = await insertRequest(m.owner, { ...a1, status: 'pending', minutesAgo: 5 / 60 });
    r.otherOrg = await insertRequest(m.owner, { orgId: t.orgA2, siteId: t.siteX1, deviceId: t.deviceX1, status: 'pending', minutesAgo: 7 / 60 });
    r.otherTenant = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, status: 'pending', minutesAgo: 3 / 60 });
  });
  afterAll(() => m.close());

  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });

  // Each list shape runs both ways a statement reaches the server: inlined into the transaction's
  // opening message (literals written by sql-text.ts) and later with bound parameters.
  describe.each([
    ['as the transaction’s first statement', 'as'],
    ['as a later statement', 'asOpened'],
  ] as const)('list %s', (_, how) => {
    const run = <T>(principal: TenantScope, fn: () => Promise<T>) => m[how](principal, fn);
    const list = (f: Partial<ElevationRequestFilter>, page = { limit: 50, offset: 0 }) => run(asAdminA(), () => repo.list(filter(f), TTL, page));

    it('lists the organization’s requests newest first with the exact total', async () => {
      const { rows, total } = await list({});
      expect(ids(rows)).toEqual([r.pendingA1, r.pendingA2, r.jit, r.expiredStored, r.approvedEnded, r.pendingLapsed, r.deniedOld]);
      expect(total).toBe(7);
      expect(rows[0]).toMatchObject({ device_hostname: `WS-A1-${t.label}`, site_name: 'A1', effective_status: 'pending' });
    });

    it('lists a pending request past its TTL and an elevation past its window as expired, not as what is stored', async () => {
      const pending = await list({ status: 'pending' });
      expect(ids(pending.rows)).toEqual([r.pendingA1, r.pendingA2]);
      expect(pending.total).toBe(2);
      const expired = await list({ status: 'expired' });
      expect(ids(expired.rows)).toEqual([r.expiredStored, r.approvedEnded, r.pendingLapsed]);
      expect(expired.total).toBe(3);
      expect(expired.rows.map((x) => x.effective_status)).toEqual(['expired', 'expired', 'expired']);
    });

    it('filters by device, site, flow type and time range, each with a total that matches its rows', async () => {
      const cases: [Partial<ElevationRequestFilter>, string[]][] = [
        [{ deviceId: t.deviceA2 }, [r.pendingA2, r.expiredStored, r.approvedEnded]],
        [{ siteId: t.siteA1 }, [r.pendingA1, r.jit, r.pendingLapsed, r.deniedOld]],
        [{ flowType: 'tech_jit_admin' }, [r.jit]],
        [{ status: 'approved' }, [r.jit]],
        [{ status: 'denied', siteId: t.siteA1 }, [r.deniedOld]],
        [{ from: new Date(Date.now() - 30 * 60_000) }, [r.pendingA1, r.pendingA2, r.jit]],
        [{ to: new Date(Date.now() - 85 * 60_000), status: 'expired' }, [r.approvedEnded, r.pendingLapsed]],
      ];
      for (const [f, expected] of cases) {
        const { rows, total } = await list(f);
        expect({ f, ids: ids(rows), total }).toEqual({ f, ids: expected, total: expected.length });
      }
    });

    it('pages through the list without overlap or gap, and past the end answers no rows with the exact total', async () => {
      const all = ids((await list({})).rows);
      const pages = [];
      for (let offset = 0; offset < 9; offset += 3) pages.push(await list({}, { limit: 3, offset }));
      expect(pages.flatMap((p) => ids(p.rows))).toEqual(all);
      expect(pages.map((p) => p.total)).toEqual([7, 7, 7]);
      expect(await list({}, { limit: 3, offset: 300 })).toEqual({ rows: [], total: 7 });
    });

    it('merges the organizations of a partner technician in one order, with a total over both', async () => {
      const { rows, total } = await run(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech }), () =>
        repo.list({ orgIds: [t.orgA, t.orgA2], siteIds: null, status: 'pending' }, TTL, { limit: 2, offset: 1 }),
      );
      expect(ids(rows)).toEqual([r.otherOrg, r.pendingA2]);
      expect(total).toBe(3);
    });

    it('shows a site-restricted member only the requests of their sites', async () => {
      const { rows, total } = await run(orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] }), () =>
        repo.list(filter({ siteIds: [t.siteA1] }), TTL, { limit: 50, offset: 0 }),
      );
      expect(ids(rows)).toEqual([r.pendingA1, r.jit, r.pendingLapsed, r.deniedOld]);
      expect(total).toBe(4);
    });

    it('never lists or counts another tenant’s requests, even when the filter names its organization', async () => {
      const named = await run(asAdminA(), () => repo.list({ orgIds: [t.orgB], siteIds: null }, TTL, { limit: 50, offset: 0 }));
      expect(named).toEqual({ rows: [], total: 0 });
      const byStatus = await run(asAdminA(), () => repo.list({ orgIds: [t.orgB], siteIds: null, status: 'pending' }, TTL, { limit: 50, offset: 0 }));
      expect(byStatus).toEqual({ rows: [], total: 0 });
    });
  });

  describe('requests at the same instant', () => {
    it('orders them by id and pages through them once each, over several organizations, with a time-range total', async () => {
      const at = new Date(Date.now() - 2 * 60 * 60_000);
      const tied: string[] = [];
      for (const org of [t.orgA, t.orgA2, t.orgA, t.orgA2, t.orgA]) {
        const device = org === t.orgA ? { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1 } : { orgId: t.orgA2, siteId: t.siteX1, deviceId: t.deviceX1 };
        tied.push(await insertRequest(m.owner, { ...device, status: 'denied', requestedAt: at }));
      }
      const asTech = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
      const seen: string[] = [];
      for (let offset = 0; offset < 6; offset += 2) {
        const page = await m.as(asTech, () => repo.list({ orgIds: [t.orgA, t.orgA2], siteIds: null, from: at, to: at }, TTL, { limit: 2, offset }));
        expect(page.total).toBe(5);
        seen.push(...ids(page.rows));
      }
      expect(seen).toEqual([...tied].sort().reverse());
    });
  });

  describe('requests within one millisecond', () => {
    it('lists them by their microseconds, newest first, with each timestamp written as Date.toISOString writes it', async () => {
      const second = Math.floor((Date.now() - 3 * 60 * 60_000) / 1000) * 1000;
      const ms = new Date(second + 123);
      const a1 = { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'denied' as const };
      const [low, high] = [await insertRequest(m.owner, a1), await insertRequest(m.owner, a1)].sort();
      // The larger id gets the earlier microsecond: ordered by the truncated text and then by id, the two would swap.
      const stamp = (micros: string) => `${ms.toISOString().slice(0, 23)}${micros}Z`;
      await m.owner.query(`UPDATE elevation_requests SET requested_at = $2::timestamptz WHERE id = $1`, [high, stamp('100')]);
      await m.owner.query(`UPDATE elevation_requests SET requested_at = $2::timestamptz WHERE id = $1`, [low, stamp('900')]);

      const { rows, total } = await m.as(asAdminA(), () => repo.list(filter({ from: ms, to: new Date(second + 124) }), TTL, { limit: 50, offset: 0 }));
      expect(total).toBe(2);
      expect(ids(rows)).toEqual([low, high]);
      expect(rows.map((x) => x.requested_at)).toEqual([ms.toISOString(), ms.toISOString()]);
      const found = await m.as(asAdminA(), () => repo.find(low, TTL));
      expect(found?.requested_at).toBe(ms.toISOString());
    });
  });

  describe('active and find', () => {
    it('lists the elevations in force, soonest to end first, and nothing past its window', async () => {
      const rows = await m.as(asAdminA(), () => repo.active([t.orgA], null, 10));
      expect(ids(rows)).toEqual([r.jit]);
    });

    it('finds a request of the caller’s tenant with its effective status, and not one of another tenant', async () => {
      const mine = await m.as(asAdminA(), () => repo.find(r.pendingLapsed, TTL));
      expect(mine).toMatchObject({ id: r.pendingLapsed, effective_status: 'expired' });
      expect(await m.as(asAdminA(), () => repo.find(r.pendingA1, TTL))).toMatchObject({ status: 'pending', effective_status: 'pending', site_name: 'A1' });
      expect(await m.as(asAdminA(), () => repo.find(r.otherTenant, TTL))).toBeNull();
    });
  });

  describe('transitions', () => {
    const actor = () => ({ userId: t.adminA, apiKeyId: null });
    const fresh = (over: Partial<RequestRow> = {}) =>
      insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, ...over });
    const stored = async (id: string) => (await m.owner.query(`SELECT status, approved_by, approved_by_name, expires_at FROM elevation_requests WHERE id = $1`, [id])).rows[0];

    it('approves a pending request once, naming the approver and opening the window; a second approval changes nothing', async () => {
      const id = await fresh();
      const first = await m.as(asAdminA(), () => repo.approve(id, actor(), 15, 'ok', TTL));
      expect(first).toMatchObject({ id, from_status: 'pending', status: 'approved' });
      expect(first!.expires_at!.getTime() - Date.now()).toBeGreaterThan(14 * 60_000);
      expect(await m.as(asAdminA(), () => repo.approve(id, actor(), 15, 'again', TTL))).toBeNull();
      expect(await stored(id)).toMatchObject({ status: 'approved', approved_by: t.adminA, approved_by_name: 'Admin A' });
    });

    it('refuses to approve a request for its own subject, or one past its TTL', async () => {
      const own = await fresh({ subjectUserId: t.adminA });
      const lapsed = await fresh({ minutesAgo: TTL + 1 });
      expect(await m.as(asAdminA(), () => repo.approve(own, actor(), 15, null, TTL))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.approve(lapsed, actor(), 15, null, TTL))).toBeNull();
      expect(await stored(own)).toMatchObject({ status: 'pending', approved_by: null });
      expect(await stored(lapsed)).toMatchObject({ approved_by: null, expires_at: null });
    });

    it('cannot approve, deny or revoke another tenant’s request', async () => {
      const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 });
      const inForce = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, status: 'approved' });
      expect(await m.as(asAdminA(), () => repo.approve(theirs, actor(), 15, null, TTL))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.deny(theirs, actor(), null, TTL))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.revoke(inForce, actor(), 'no'))).toBeNull();
      expect((await stored(theirs)).status).toBe('pending');
      expect((await stored(inForce)).status).toBe('approved');
    });

    it('denies a pending request, and revokes only an elevation still in force', async () => {
      const pending = await fresh();
      expect(await m.as(asAdminA(), () => repo.deny(pending, actor(), 'no', TTL))).toMatchObject({ from_status: 'pending', status: 'denied' });
      const inForce = await fresh({ status: 'auto_approved' });
      const ended = await fresh({ status: 'approved', expiresInMinutes: -1 });
      expect(await m.as(asAdminA(), () => repo.revoke(inForce, actor(), 'done'))).toMatchObject({ from_status: 'auto_approved', status: 'revoked' });
      expect(await m.as(asAdminA(), () => repo.revoke(ended, actor(), 'late'))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.revoke(pending, actor(), 'denied already'))).toBeNull();
    });

    it('claims an actuation once, on the request’s own device only, and a released claim can be claimed again', async () => {
      const id = await fresh({ status: 'approved' });
      expect(await m.as(asAdminA(), () => repo.claimActuation(id, t.deviceA2))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.claimActuation(id, t.deviceA1))).toMatchObject({ from_status: 'approved', status: 'actuating' });
      expect(await m.as(asAdminA(), () => repo.claimActuation(id, t.deviceA1))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.releaseActuation(id))).toMatchObject({ from_status: 'actuating', status: 'approved', actuated_at: null });
      expect(await m.as(asAdminA(), () => repo.claimActuation(id, t.deviceA1))).toMatchObject({ status: 'actuating' });
    });

    it('withdraws a queued actuation and queues a revoke on the device', async () => {
      const id = await fresh({ status: 'actuating' });
      const { rows } = await m.owner.query<{ id: string }>(
        `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id) VALUES ($1, $2, 'actuate_elevation', '{}', $3) RETURNING id`,
        [t.orgA, t.deviceA1, id],
      );
      const revokeId = await m.as(asAdminA(), () => repo.queueRevokeOnDevice(t.orgA, t.deviceA1, id, 'revoked'));
      const commands = (await m.owner.query(`SELECT id, type, status, error FROM device_commands WHERE elevation_request_id = $1 ORDER BY created_at, type`, [id])).rows;
      expect(commands).toEqual(
        expect.arrayContaining([
          { id: rows[0].id, type: 'actuate_elevation', status: 'failed', error: 'Elevation revoked before the command was delivered' },
          { id: revokeId, type: 'revoke_elevation', status: 'queued', error: null },
        ]),
      );
      expect(commands).toHaveLength(2);
    });
  });

  describe('expireDue', () => {
    // Under an organization's scope rather than system context, so that this sweep touches only this
    // file's tenant. Other files of the run sweep in system context at any moment (with TTLs of 2
    // minutes and more), so the pending rows here are due only under this test's 1-minute TTL, and
    // the state after the sweep is checked rather than who swept the ended window.
    const SWEEP_TTL = 1;

    it('expires every due request of the tenant with its event and a revoke for a claimed actuation, returns what the audit rows are written from, and leaves other tenants alone', async () => {
      const due = { orgId: t.orgA2, siteId: t.siteX1, deviceId: t.deviceX1 };
      const lapsed = await insertRequest(m.owner, { ...due, minutesAgo: 1.5 });
      const actuated = await insertRequest(m.owner, { ...due, status: 'actuating', expiresInMinutes: -1 });
      const live = await insertRequest(m.owner, { ...due, status: 'approved' });
      const fresh = await insertRequest(m.owner, { ...due, minutesAgo: 0.2 });
      const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, minutesAgo: 1.5 });
      const result = await m.as(orgPrincipal(t.orgA2), () => repo.expireDue(SWEEP_TTL, 100));
      const swept = result.map((x) => x.id);
      expect(swept).toContain(lapsed);
      expect(swept.filter((id) => [live, fresh, theirs].includes(id))).toEqual([]);
      // The expiry job writes the sweep's audit rows through AuditService from these rows
      // (test/e2e/pam-lifecycle/respond-revoke.e2e.test.ts checks them). The ended window may have
      // been swept by another file first, so only what this sweep returned is checked.
      const fromStatus: Record<string, string> = { [lapsed]: 'pending', [actuated]: 'actuating' };
      for (const row of result.filter((x) => x.id in fromStatus)) expect({ id: row.id, from: row.from_status, org: row.org_id }).toEqual({ id: row.id, from: fromStatus[row.id], org: t.orgA2 });
      const statuses = (await m.owner.query(`SELECT id, status FROM elevation_requests WHERE id = ANY($1)`, [[lapsed, actuated, live, fresh, theirs]])).rows;
      expect(Object.fromEntries(statuses.map((x) => [x.id, x.status]))).toEqual({ [lapsed]: 'expired', [actuated]: 'expired', [live]: 'approved', [fresh]: 'pending', [theirs]: 'pending' });
      const events = (await m.owner.query(`SELECT elevation_request_id, details->>'reason' AS reason FROM pam_elevation_events WHERE type = 'expired' AND elevation_request_id = ANY($1)`, [[lapsed, actuated]])).rows;
      expect(events).toHaveLength(2);
      expect(Object.fromEntries(events.map((x) => [x.elevation_request_id, x.reason]))).toEqual({ [lapsed]: 'pending_ttl', [actuated]: 'window_ended' });
      const revokes = (await m.owner.query(`SELECT elevation_request_id FROM device_commands WHERE type = 'revoke_elevation' AND org_id = $1`, [t.orgA2])).rows;
      expect(revokes).toEqual([{ elevation_request_id: actuated }]);
    });
  });
});
