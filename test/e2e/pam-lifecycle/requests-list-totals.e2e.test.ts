import { Client } from 'pg';
import { ElevationExpiryJob } from '../../../src/modules/pam/requests/elevation-expiry.job';
import { ownerQuery } from '../../support/test-app';
import { list, PamWorld, respond, revoke, seedRequest, startPamWorld, type RequestSeed } from './pam-lifecycle.kit';

/**
 * pagination.total of GET /pam/elevation-requests is exact for every filter: totals without a time
 * range come from elevation_request_counts (kept by triggers), so they are checked here against a
 * model of the seeded requests, before and after transitions and a sweep, and the counters against
 * the requests themselves.
 */

type Flow = 'uac_intercept' | 'tech_jit_admin' | 'ai_tool_action';
interface Modelled {
  id: string;
  org: string;
  device: string;
  site: string;
  flow: Flow;
  status: string;
  requestedUs: number;
  expiresAt: number | null;
}

const DEVICE_SITE: Record<string, [string, string]> = { deviceA1: ['orgA', 'siteA1'], deviceA2: ['orgA', 'siteA2'], deviceB1: ['orgB', 'siteB1'] };
const ACTIVE = ['approved', 'auto_approved', 'actuating'];
const STATUSES = ['pending', 'approved', 'auto_approved', 'actuating', 'denied', 'expired', 'revoked'];
const FLOWS: Flow[] = ['uac_intercept', 'tech_jit_admin', 'ai_tool_action'];

describe('exact totals of the elevation request list for every filter', () => {
  let w: PamWorld;
  let ttlMinutes: number;
  const rows: Modelled[] = [];

  async function seed(s: RequestSeed & { device: string; flowType: Flow }): Promise<string> {
    const id = await seedRequest(w, s);
    // Microseconds, as stored: requests written in the same millisecond still have one order.
    const [stored] = await ownerQuery<{ requested_us: string; expires_at: Date | null }>(
      `SELECT (extract(epoch FROM requested_at) * 1000000)::bigint AS requested_us, expires_at FROM elevation_requests WHERE id = $1`,
      [id],
    );
    const [org, site] = DEVICE_SITE[s.device];
    rows.push({ id, org, device: s.device, site, flow: s.flowType, status: s.status ?? 'pending', requestedUs: Number(stored.requested_us), expiresAt: stored.expires_at?.getTime() ?? null });
    return id;
  }

  /** What the list must show: the effective status (a deadline passed counts as expired before any sweep). */
  function effective(r: Modelled, now: number): string {
    if (r.status === 'pending' && r.requestedUs / 1000 <= now - ttlMinutes * 60_000) return 'expired';
    if (ACTIVE.includes(r.status) && r.expiresAt !== null && r.expiresAt <= now) return 'expired';
    return r.status;
  }

  type Query = { status?: string; flowType?: Flow; deviceId?: string; siteId?: string; from?: string; to?: string; orgId?: string };

  function expected(q: Query, orgs: string[], sites: string[] | null): Modelled[] {
    const now = Date.now();
    return rows
      .filter((r) => orgs.includes(r.org) && (!q.orgId || w.ids[r.org] === q.orgId) && (!sites || sites.includes(r.site)))
      .filter((r) => !q.status || effective(r, now) === q.status)
      .filter((r) => !q.flowType || r.flow === q.flowType)
      .filter((r) => !q.deviceId || w.ids[r.device] === q.deviceId)
      .filter((r) => !q.siteId || w.ids[r.site] === q.siteId)
      .filter((r) => !q.from || r.requestedUs >= Date.parse(q.from) * 1000)
      .filter((r) => !q.to || r.requestedUs <= Date.parse(q.to) * 1000)
      .sort((a, b) => b.requestedUs - a.requestedUs || (a.id < b.id ? 1 : -1));
  }

  /** Every filter alone and in pairs, for one caller; each answer's total and rows against the model. */
  async function checkEveryFilter(token: string, orgs: string[], sites: string[] | null): Promise<number> {
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
    const queries: Query[] = [{}];
    for (const status of STATUSES) queries.push({ status });
    for (const flowType of FLOWS) queries.push({ flowType });
    for (const device of ['deviceA1', 'deviceA2']) {
      queries.push({ deviceId: w.ids[device] });
      queries.push({ deviceId: w.ids[device], status: 'denied' }, { deviceId: w.ids[device], status: 'expired' }, { deviceId: w.ids[device], flowType: 'tech_jit_admin' });
    }
    queries.push({ siteId: w.ids.siteA2 }, { siteId: w.ids.siteA2, status: 'pending' }, { siteId: w.ids.siteA2, flowType: 'ai_tool_action' });
    queries.push({ status: 'denied', flowType: 'ai_tool_action' }, { status: 'expired', flowType: 'uac_intercept' });
    queries.push({ from: minutesAgo(45) }, { from: minutesAgo(45), status: 'denied' }, { from: minutesAgo(90), to: minutesAgo(10), flowType: 'uac_intercept' });
    queries.push({ to: minutesAgo(30), status: 'expired' }, { from: minutesAgo(60), deviceId: w.ids.deviceA1, status: 'pending' });
    let checked = 0;
    for (const q of queries) {
      // A site-restricted caller naming a site outside theirs is refused (requests-list.e2e.test.ts).
      if (sites && q.siteId && !sites.some((site) => w.ids[site] === q.siteId)) continue;
      const want = expected(q, orgs, sites);
      const res = await list(w, token, { ...q, limit: 100 }).expect(200);
      expect({ q, total: res.body.pagination.total }).toEqual({ q, total: want.length });
      expect({ q, ids: res.body.requests.map((x: { id: string }) => x.id) }).toEqual({ q, ids: want.map((r) => r.id) });
      checked++;
    }
    return checked;
  }

  async function countersMatchRequests(): Promise<void> {
    const drift = await ownerQuery(
      `SELECT coalesce(c.org_id, e.org_id) AS org_id, coalesce(c.device_id, e.device_id) AS device_id, c.n, e.n AS actual
         FROM (SELECT * FROM elevation_request_counts WHERE org_id = ANY($1::uuid[]) AND n <> 0) c
         FULL JOIN (SELECT org_id, device_id, flow_type, status, site_id, count(*) AS n FROM elevation_requests
                     WHERE org_id = ANY($1::uuid[]) GROUP BY 1, 2, 3, 4, 5) e
           ON (c.org_id, c.device_id, c.flow_type, c.status, c.site_id) = (e.org_id, e.device_id, e.flow_type, e.status, e.site_id)
        WHERE c.n IS DISTINCT FROM e.n`,
      [[w.ids.orgA, w.ids.orgB]],
    );
    expect(drift).toEqual([]);
  }

  beforeAll(async () => {
    w = await startPamWorld();
    ttlMinutes = w.t.config.pamPendingTtlMinutes;
    const plan: (RequestSeed & { device: string; flowType: Flow })[] = [];
    let age = 1;
    for (const device of ['deviceA1', 'deviceA2', 'deviceB1']) {
      for (const flowType of FLOWS) {
        plan.push({ device, flowType, status: 'pending', ageMinutes: age++ });
        plan.push({ device, flowType, status: 'pending', ageMinutes: ttlMinutes + age++ });
        plan.push({ device, flowType, status: 'denied', decisionSource: 'pam_rule', ageMinutes: age++ });
        plan.push({ device, flowType, status: 'auto_approved', decisionSource: 'pam_rule', ageMinutes: age++ });
        plan.push({ device, flowType, status: 'approved', expiresInMinutes: -2, ageMinutes: age++ });
        plan.push({ device, flowType, status: 'expired', ageMinutes: age++ });
        plan.push({ device, flowType, status: 'revoked', expiresInMinutes: 5, ageMinutes: age++ });
      }
    }
    plan.push({ device: 'deviceA2', flowType: 'uac_intercept', status: 'actuating', decisionSource: 'pam_rule', ageMinutes: age++ });
    for (const p of plan) await seed(p);
  });
  afterAll(() => w.t.close());

  it('answers the exact total and the matching rows for each filter alone and combined, for every kind of caller', async () => {
    expect(await checkEveryFilter(w.plain.adminA, ['orgA'], null)).toBeGreaterThanOrEqual(29);
    await checkEveryFilter(w.plain.siteA1User, ['orgA'], ['siteA1']);
    await checkEveryFilter(w.plain.tech, ['orgA', 'orgB'], null);
    const narrowed = await list(w, w.plain.tech, { orgId: w.ids.orgB, status: 'denied' }).expect(200);
    expect(narrowed.body.pagination.total).toBe(expected({ orgId: w.ids.orgB, status: 'denied' }, ['orgA', 'orgB'], null).length);
    await countersMatchRequests();
  });

  it('keeps every total exact through approvals, denials, revocations and a sweep', async () => {
    const now = Date.now();
    const live = rows.filter((r) => r.org === 'orgA' && effective(r, now) === 'pending');
    const [toApprove, toDeny] = live;
    await respond(w, w.mfa.tech, toApprove.id, { decision: 'approve', durationMinutes: 30 }).expect(200);
    toApprove.status = 'approved';
    toApprove.expiresAt = Date.now() + 30 * 60_000;
    await respond(w, w.mfa.tech, toDeny.id, { decision: 'deny' }).expect(200);
    toDeny.status = 'denied';
    await checkEveryFilter(w.plain.adminA, ['orgA'], null);

    await revoke(w, w.mfa.tech, toApprove.id, { reason: 'no longer needed' }).expect(200);
    toApprove.status = 'revoked';
    await checkEveryFilter(w.plain.adminA, ['orgA'], null);

    // The sweep rewrites every request past its deadline as expired: the effective statuses do not move.
    await w.t.app.get(ElevationExpiryJob).runOnce();
    const stored = await ownerQuery<{ id: string; status: string }>('SELECT id, status FROM elevation_requests WHERE org_id = ANY($1::uuid[])', [[w.ids.orgA, w.ids.orgB]]);
    const byId = new Map(stored.map((s) => [s.id, s.status]));
    const swept = rows.filter((r) => byId.get(r.id) === 'expired' && r.status !== 'expired');
    expect(swept.length).toBeGreaterThan(0);
    for (const r of rows) r.status = byId.get(r.id)!;
    await checkEveryFilter(w.plain.adminA, ['orgA'], null);
    await checkEveryFilter(w.plain.tech, ['orgA', 'orgB'], null);
    await countersMatchRequests();
  });

  it('counts every request written by concurrent transactions on the same counter', async () => {
    const writers = Array.from({ length: 24 }, () =>
      seed({ device: 'deviceA1', flowType: 'tech_jit_admin', status: 'denied', decisionSource: 'pam_rule', ageMinutes: 0 }),
    );
    await Promise.all(writers);
    await countersMatchRequests();
    const res = await list(w, w.plain.adminA, { deviceId: w.ids.deviceA1, flowType: 'tech_jit_admin', status: 'denied' }).expect(200);
    expect(res.body.pagination.total).toBe(expected({ deviceId: w.ids.deviceA1, flowType: 'tech_jit_admin', status: 'denied' }, ['orgA'], null).length);
  });

  it('pages a partner technician\'s list across organizations in one order, with no request missing or repeated', async () => {
    const want = expected({}, ['orgA', 'orgB'], null).map((r) => r.id);
    const seen: string[] = [];
    for (let page = 1; page <= Math.ceil(want.length / 7) + 1; page++) {
      const res = await list(w, w.plain.tech, { limit: 7, page }).expect(200);
      expect(res.body.pagination.total).toBe(want.length);
      seen.push(...res.body.requests.map((x: { id: string }) => x.id));
    }
    expect(seen).toEqual(want);
  });

  it('answers an empty page with the exact total for a page number far past the end, and 400 for one past any offset', async () => {
    const total = expected({}, ['orgA'], null).length;
    for (const page of [Math.ceil(total / 10) + 1, 2 ** 40]) {
      const res = await list(w, w.plain.adminA, { limit: 10, page: String(page) });
      expect({ page, status: res.status, body: res.body }).toEqual({ page, status: 200, body: expect.objectContaining({ requests: [], pagination: { page, limit: 10, total } }) });
    }
    const absurd = await list(w, w.plain.adminA, { limit: 10, page: '100000000000000000000' });
    expect({ status: absurd.status, code: absurd.body.code }).toEqual({ status: 400, code: 'invalid_input' });
  });

  it('keeps another organization\'s counters, and a site-restricted caller\'s other sites, out of reach of the request role, for reading and for writing', async () => {
    const client = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT set_config('app.scope', 'organization', true), set_config('app.org_ids', $1, true)`, [`{${w.ids.orgB}}`]);
      const seen = await client.query('SELECT count(*)::int AS n FROM elevation_request_counts WHERE org_id = $1', [w.ids.orgA]);
      expect(seen.rows[0].n).toBe(0);
      const own = await client.query('SELECT coalesce(sum(n), 0)::int AS n FROM elevation_request_counts WHERE org_id = $1', [w.ids.orgB]);
      expect(own.rows[0].n).toBe(rows.filter((r) => r.org === 'orgB').length);
      await expect(
        client.query(`INSERT INTO elevation_request_counts (org_id, device_id, flow_type, status, site_id, n) VALUES ($1, $2, 'uac_intercept', 'denied', $3, 1000)`, [
          w.ids.orgA,
          w.ids.deviceA1,
          w.ids.siteA1,
        ]),
      ).rejects.toThrow(/row-level security/);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    }
    const siteClient = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await siteClient.connect();
    try {
      await siteClient.query('BEGIN');
      await siteClient.query(`SELECT set_config('app.scope', 'organization', true), set_config('app.org_ids', $1, true), set_config('app.site_ids', $2, true)`, [
        `{${w.ids.orgA}}`,
        `{${w.ids.siteA1}}`,
      ]);
      const sites = await siteClient.query('SELECT DISTINCT site_id FROM elevation_request_counts WHERE org_id = $1', [w.ids.orgA]);
      expect(sites.rows).toEqual([{ site_id: w.ids.siteA1 }]);
      await expect(
        siteClient.query(`INSERT INTO elevation_request_counts (org_id, device_id, flow_type, status, site_id, n) VALUES ($1, $2, 'uac_intercept', 'denied', $3, 1000)`, [
          w.ids.orgA,
          w.ids.deviceA2,
          w.ids.siteA2,
        ]),
      ).rejects.toThrow(/row-level security/);
    } finally {
      await siteClient.query('ROLLBACK').catch(() => undefined);
      await siteClient.end();
    }
    const updated = await ownerQuery<{ n: string }>(`SELECT coalesce(sum(n), 0) AS n FROM elevation_request_counts WHERE org_id = $1`, [w.ids.orgA]);
    expect(Number(updated[0].n)).toBe(rows.filter((r) => r.org === 'orgA').length);
  });
});
