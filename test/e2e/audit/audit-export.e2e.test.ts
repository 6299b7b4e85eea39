import { get, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Client } from 'pg';
import { scopeStatement } from '../../../src/infra/database/tenant-scope';
import { DrainState } from '../../../src/modules/health/drain-state';
import { AuditExportRepository } from '../../../src/modules/audit/audit-export.repository';
import { AuditExportService } from '../../../src/modules/audit/audit-export.service';
import { AUDIT_EXPORT } from '../../../src/modules/audit/dto/audit-export.dto';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';

/**
 * Issue 29, item 4: GET /audit-logs/export, the audit log as NDJSON for an MSP's SIEM, in
 * (createdAt, id) order, resumable with a cursor, scoped as GET /audit-logs is, in batches that
 * stop when the client leaves (docs/api-conventions.md, "Exporting the audit log").
 *
 * The events are written straight into audit_logs by the owner, at instants of a day in 2012 that
 * no other test uses, so each expectation is an exact list: organization A's 2,503 events (two
 * batches and a half, three of them sharing one microsecond), organization B's, partner P's own
 * (one of them acted by the organization-limited technician), another partner's, and a system row.
 */

interface EventLine {
  id: string;
  orgId: string | null;
  partnerId: string | null;
  action: string;
  resourceId: string | null;
  createdAt: string;
  cursor: string;
  [key: string]: unknown;
}
interface End {
  cursor: string;
  count: number;
  more: boolean;
  until: string;
}
interface Exported {
  status: number;
  type: string;
  events: EventLine[];
  end: End | null;
  body: Record<string, unknown> | null;
  lines: string[];
}

const DAY = 86_400_000;
const BASE = Date.parse('2012-03-14T00:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();

describe('GET /audit-logs/export', () => {
  let t: TestApp;
  let p: Record<string, string>;
  let q: Record<string, string>;
  const bearer: Record<string, string> = {};
  /** Each request from an address of its own, so that only the rate-limit test spends one address's budget. */
  let address = 0;

  /** The ids of the seeded events a query selects, in export order. */
  const idsWhere = async (where: string, params: unknown[] = []) =>
    (await ownerQuery<{ id: string }>(`SELECT id FROM audit_logs WHERE action LIKE 'export.%' AND ${where} ORDER BY created_at, id`, params)).map((r) => r.id);

  async function exportAs(who: string, query: Record<string, string | number>, from = `10.77.${(++address >> 8) & 255}.${address & 255}`): Promise<Exported> {
    const url = `${t.baseUrl}/api/v1/audit-logs/export?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${bearer[who] ?? who}`, 'x-forwarded-for': from } });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    if (!type.startsWith('application/x-ndjson')) return { status: res.status, type, events: [], end: null, body: JSON.parse(text), lines: [] };
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    const parsed = lines.map((l) => JSON.parse(l) as EventLine | { end: End });
    const last = parsed.pop() as { end: End };
    return { status: res.status, type, events: parsed as EventLine[], end: last.end, body: null, lines };
  }

  /** Every event from `query` on, following `more` and the trailer's cursor. */
  async function exportAll(who: string, query: Record<string, string | number>): Promise<{ events: EventLine[]; responses: number }> {
    const events: EventLine[] = [];
    let responses = 0;
    let next: Record<string, string | number> = query;
    for (;;) {
      const r = await exportAs(who, next);
      expect(r.status).toBe(200);
      responses++;
      events.push(...r.events);
      if (!r.end!.more) return { events, responses };
      const { from: _from, ...rest } = next;
      next = { ...rest, cursor: r.end!.cursor };
    }
  }

  const DAY_OF_EVENTS = { from: at(BASE), to: at(BASE + DAY) };

  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
    p = await t.seed(tenantFixture());
    q = await t.seed(tenantFixture());
    bearer.adminA = await t.token(p.adminA, { mfa: true });
    bearer.tech = await t.token(p.tech, { mfa: true });
    bearer.techA = await t.token(p.techA, { mfa: true });
    bearer.otherTech = await t.token(q.tech, { mfa: true });
    const ins = `INSERT INTO audit_logs (org_id, partner_id, actor_type, actor_user_id, action, resource_type, resource_id, details, created_at)`;
    await ownerQuery(
      `${ins} SELECT $1::uuid, NULL, 'system', NULL, 'export.orgA', 'thing', g::text, jsonb_build_object('n', g), $2::timestamptz + g * interval '1 second'
         FROM generate_series(1, 2500) g`,
      [p.orgA, at(BASE)],
    );
    // Three events of one microsecond: the id orders them.
    await ownerQuery(`${ins} SELECT $1::uuid, NULL, 'system', NULL, 'export.orgA', 'thing', 'tie-' || g, '{}', $2::timestamptz + interval '100.5 seconds' FROM generate_series(1, 3) g`, [
      p.orgA,
      at(BASE),
    ]);
    await ownerQuery(`${ins} SELECT $1::uuid, NULL, 'user', NULL, 'export.orgB', 'thing', g::text, '{}', $2::timestamptz + g * interval '7 seconds' FROM generate_series(1, 300) g`, [p.orgB, at(BASE)]);
    await ownerQuery(`${ins} SELECT NULL, $1::uuid, 'user', NULL, 'export.partner', 'thing', g::text, '{}', $2::timestamptz + g * interval '13 seconds' FROM generate_series(1, 50) g`, [
      p.partner,
      at(BASE),
    ]);
    await ownerQuery(`${ins} VALUES (NULL, $1, 'user', $2, 'export.partner.by-techA', 'thing', 'own', '{}', $3)`, [p.partner, p.techA, at(BASE + 500_000)]);
    await ownerQuery(`${ins} SELECT $1::uuid, NULL, 'user', NULL, 'export.other', 'thing', g::text, '{}', $2::timestamptz + g * interval '3 seconds' FROM generate_series(1, 300) g`, [q.orgA, at(BASE)]);
    await ownerQuery(`${ins} VALUES (NULL, $1, 'user', NULL, 'export.other.partner', 'thing', 'q', '{}', $2)`, [q.partner, at(BASE + 60_000)]);
    await ownerQuery(`${ins} VALUES (NULL, NULL, 'system', NULL, 'export.system', 'thing', 'sys', '{}', $1)`, [at(BASE + 60_000)]);
  }, 60_000);
  afterAll(() => t.close());

  it('streams NDJSON: one event per line in (createdAt, id) order, each as the list shows it with its cursor, then the trailer', async () => {
    const expected = await idsWhere('org_id = $1', [p.orgA]);
    expect(expected).toHaveLength(2503);
    const r = await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 100_000 });
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/x-ndjson; charset=utf-8');
    expect(r.events.map((e) => e.id)).toEqual(expected);
    expect(r.end).toEqual({ cursor: expect.stringMatching(/^[A-Za-z0-9_-]{34}$/), count: 2503, more: false, until: at(BASE + DAY) });
    // The three events of one microsecond come in id order.
    const ties = r.events.filter((e) => e.resourceId?.startsWith('tie-')).map((e) => e.id);
    expect(ties).toEqual([...ties].sort());
    expect(new Set(r.events.map((e) => e.cursor)).size).toBe(2503);

    const listed = await fetch(`${t.baseUrl}/api/v1/audit-logs?${new URLSearchParams({ resourceId: '42', orgId: p.orgA })}`, { headers: { authorization: `Bearer ${bearer.adminA}` } });
    const [entry] = ((await listed.json()) as { auditLogs: Record<string, unknown>[] }).auditLogs;
    const { cursor, ...line } = r.events.find((e) => e.id === entry.id)!;
    expect(line).toEqual(entry);
    expect(cursor).toEqual(expect.any(String));
  });

  it('stops at the limit with more: true, and the trailer cursor resumes with no gap and no duplicate', async () => {
    const expected = await idsWhere('org_id = $1', [p.orgA]);
    const first = await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 1_234 });
    expect(first.events).toHaveLength(1_234);
    expect(first.end).toMatchObject({ count: 1_234, more: true, cursor: first.events[1_233].cursor });
    const { events, responses } = await exportAll('adminA', { to: DAY_OF_EVENTS.to, cursor: first.end!.cursor, limit: 1_234 });
    expect(responses).toBe(2);
    expect([...first.events, ...events].map((e) => e.id)).toEqual(expected);
  });

  it("resumes from any event's cursor exactly after that event, across batches and within one microsecond", async () => {
    const all = (await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 100_000 })).events;
    const firstTie = all.findIndex((e) => e.resourceId?.startsWith('tie-'));
    for (const i of [0, firstTie, firstTie + 1, AUDIT_EXPORT.batchSize - 1, AUDIT_EXPORT.batchSize, all.length - 2]) {
      const rest = await exportAs('adminA', { to: DAY_OF_EVENTS.to, cursor: all[i].cursor, limit: 100_000 });
      expect(rest.events.map((e) => e.id)).toEqual(all.slice(i + 1).map((e) => e.id));
    }
    const past = await exportAs('adminA', { to: DAY_OF_EVENTS.to, cursor: all[all.length - 1].cursor });
    expect(past.events).toEqual([]);
    expect(past.end).toMatchObject({ count: 0, more: false });
  });

  it("shows each caller what GET /audit-logs shows it: its organizations, its partner's events as the partner rules say, never another tenant's", async () => {
    const ids = async (who: string) => (await exportAll(who, DAY_OF_EVENTS)).events.map((e) => e.id);
    // Organization A's administrator: organization A only.
    expect(await ids('adminA')).toEqual(await idsWhere('org_id = $1', [p.orgA]));
    // The technician of every organization: both organizations and the partner's own events.
    expect(await ids('tech')).toEqual(await idsWhere('(org_id = ANY($1) OR partner_id = $2)', [[p.orgA, p.orgB], p.partner]));
    // The technician limited to organization A: its events, and of the partner's own only those he acted in.
    expect(await ids('techA')).toEqual(await idsWhere(`(org_id = $1 OR (partner_id = $2 AND actor_user_id = $3))`, [p.orgA, p.partner, p.techA]));
    // Another partner: its own, none of partner P's, no system row.
    expect(await ids('otherTech')).toEqual(await idsWhere('(org_id = $1 OR partner_id = $2)', [q.orgA, q.partner]));
  });

  it("answers nothing of another tenant's organization named in orgId, and narrows to one of the caller's own", async () => {
    const named = async (who: string, orgId: string) => (await exportAs(who, { ...DAY_OF_EVENTS, orgId, limit: 100_000 })).events.map((e) => e.id);
    expect(await named('adminA', p.orgB)).toEqual([]);
    expect(await named('otherTech', p.orgA)).toEqual([]);
    expect(await named('tech', q.orgA)).toEqual([]);
    expect(await named('tech', p.orgB)).toEqual(await idsWhere('org_id = $1', [p.orgB]));
  });

  it("resumes at the time of another tenant's cursor without showing that tenant's events", async () => {
    const theirs = await exportAs('otherTech', { ...DAY_OF_EVENTS, limit: 10 });
    const foreign = theirs.events[9];
    const r = await exportAs('adminA', { to: DAY_OF_EVENTS.to, cursor: foreign.cursor, limit: 100_000 });
    // Strictly after that event: an event of organization A at the same instant comes after it when its id is greater.
    expect(r.events.map((e) => e.id)).toEqual(await idsWhere('org_id = $1 AND (created_at, id) > ($2, $3)', [p.orgA, foreign.createdAt, foreign.id]));
    expect(r.events.some((e) => e.orgId === q.orgA)).toBe(false);
  });

  it('lets an API key that may read the audit log export it, and refuses one that may not with 403', async () => {
    const keyWith = async (permissions: string[]) => {
      const res = await fetch(`${t.baseUrl}/api/v1/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer.adminA}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `SIEM ${permissions.join(' ')}`, permissions }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { key: string }).key;
    };
    const reader = await exportAll(await keyWith(['audit:read']), DAY_OF_EVENTS);
    expect(reader.events.map((e) => e.id)).toEqual(await idsWhere('org_id = $1', [p.orgA]));
    const refused = await exportAs(await keyWith(['devices:read']), DAY_OF_EVENTS);
    expect(refused).toMatchObject({ status: 403, body: { success: false, statusCode: 403, code: 'forbidden', permission: 'audit:read' } });
    expect(await exportAs('not-a-credential', DAY_OF_EVENTS)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  });

  it.each([
    ['from missing, and no cursor', {}, 'from'],
    ['from not a date', { from: 'yesterday' }, 'from'],
    ['from with a 13th month', { from: '2012-13-01T00:00:00Z' }, 'from'],
    ['from without a time zone', { from: '2012-03-14T00:00:00' }, 'from'],
    ['from with a space and no time zone', { from: '2012-03-14 10:00' }, 'from'],
    ['from before 1970', { from: '1969-12-31T23:59:59Z' }, 'from'],
    ['from as a week date', { from: '2012-W11-3' }, 'from'],
    ['from and cursor together', { from: '2012-03-14T00:00:00Z', cursor: 'CURSOR' }, 'from'],
    ['to not a date', { from: '2012-03-14T00:00:00Z', to: 'soon' }, 'to'],
    ['to before from', { from: '2012-03-14T00:00:00Z', to: '2012-03-13T23:59:59.999Z' }, 'to'],
    ['cursor of the wrong length', { cursor: 'abc' }, 'cursor'],
    ['cursor that is not base64url', { cursor: '!'.repeat(34) }, 'cursor'],
    ['cursor of another version', { cursor: Buffer.alloc(25, 7).toString('base64url') }, 'cursor'],
    ['cursor of a time after 9999', { cursor: Buffer.concat([Buffer.from([1]), Buffer.alloc(8, 0x7f), Buffer.alloc(16)]).toString('base64url') }, 'cursor'],
    ['limit 0', { from: '2012-03-14T00:00:00Z', limit: 0 }, 'limit'],
    ['limit 100,001', { from: '2012-03-14T00:00:00Z', limit: 100_001 }, 'limit'],
    ['limit not a whole number', { from: '2012-03-14T00:00:00Z', limit: 1.5 }, 'limit'],
    ['limit not a number', { from: '2012-03-14T00:00:00Z', limit: 'all' }, 'limit'],
    ['orgId not an id', { from: '2012-03-14T00:00:00Z', orgId: 'org-a' }, 'orgId'],
  ] as [string, Record<string, string | number>, string][])('refuses %s with 400 validation_failed naming the field', async (_label, query, field) => {
    const valid = (await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 1 })).end!.cursor;
    const r = await exportAs('adminA', Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v === 'CURSOR' ? valid : v])));
    expect(r.status).toBe(400);
    expect(r.type).toMatch(/^application\/json/);
    expect(r.body).toMatchObject({ success: false, statusCode: 400, code: 'validation_failed', requestId: expect.any(String) });
    expect((r.body!.details as { field: string }[]).map((d) => d.field)).toContain(field);
  });

  it('serves a range of exactly 31 days and refuses one a millisecond longer, from from or from a cursor', async () => {
    const from = BASE - 10 * DAY;
    const edge = await exportAs('adminA', { from: at(from), to: at(from + 31 * DAY), limit: 100_000 });
    expect(edge.status).toBe(200);
    expect(edge.events.map((e) => e.id)).toEqual(await idsWhere('org_id = $1', [p.orgA]));
    const over = await exportAs('adminA', { from: at(from), to: at(from + 31 * DAY + 1) });
    expect(over).toMatchObject({ status: 400, body: { code: 'validation_failed', details: [{ field: 'to' }] } });
    const cursor = edge.events[0].cursor;
    const fromCursor = await exportAs('adminA', { cursor, to: at(Date.parse(edge.events[0].createdAt) + 31 * DAY + 1) });
    expect(fromCursor).toMatchObject({ status: 400, body: { code: 'validation_failed', details: [{ field: 'to' }] } });
  });

  it('ends a response without to 31 days after its start with more: true, and the next one goes on from there', async () => {
    const from = BASE - 40 * DAY;
    const first = await exportAs('adminA', { from: at(from) });
    expect(first.events).toEqual([]);
    expect(first.end).toMatchObject({ count: 0, more: true, until: at(from + 31 * DAY) });
    const next = await exportAs('adminA', { cursor: first.end!.cursor, limit: 100_000 });
    expect(next.events.map((e) => e.id)).toEqual(await idsWhere('org_id = $1', [p.orgA]));
    expect(next.end).toMatchObject({ more: true, until: at(from + 31 * DAY + 31 * DAY) });
  });

  it('serves the smallest and the largest limit', async () => {
    const one = await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 1 });
    expect(one.events).toHaveLength(1);
    expect(one.end).toMatchObject({ count: 1, more: true });
    const most = await exportAs('adminA', { ...DAY_OF_EVENTS, limit: AUDIT_EXPORT.maxLimit });
    expect(most.status).toBe(200);
    expect(most.end).toMatchObject({ count: 2503, more: false });
  });

  it('holds back the events of the last 2 seconds: a response ends at least that far behind the database clock', async () => {
    const r = await exportAs('adminA', { from: at(Date.now() - DAY) });
    const [{ now }] = await ownerQuery<{ now: Date }>('SELECT clock_timestamp() AS now');
    expect(r.end!.more).toBe(false);
    expect(now.getTime() - Date.parse(r.end!.until)).toBeGreaterThanOrEqual(AUDIT_EXPORT.settleSeconds * 1000);
  });

  it('holds back events written after a transaction that is still open began, and delivers them, none skipped, once it commits', async () => {
    const late = new Client({ connectionString: process.env.DATABASE_APP_URL });
    const other = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await late.connect();
    await other.connect();
    const scope = scopeStatement({ scope: 'organization', orgIds: [p.orgA], partnerIds: [], userId: null });
    const insert = `INSERT INTO audit_logs (org_id, actor_type, action) VALUES ($1, 'system', $2) RETURNING id, (extract(epoch FROM created_at) * 1000000)::int8::text AS us`;
    try {
      await late.query(`BEGIN; ${scope}`);
      const [lateRow] = (await late.query<{ id: string; us: string }>(insert, [p.orgA, 'export.late'])).rows;
      await other.query(`BEGIN; ${scope}`);
      const [laterRow] = (await other.query<{ id: string; us: string }>(insert, [p.orgA, 'export.committed-first'])).rows;
      await other.query('COMMIT');
      // Until both are older than the settle window: what holds them back now is the open transaction.
      const settled = async () =>
        (await ownerQuery<{ ok: boolean }>(`SELECT clock_timestamp() > to_timestamp($1::numeric / 1000000) + make_interval(secs => $2) AS ok`, [laterRow.us, AUDIT_EXPORT.settleSeconds]))[0].ok;
      while (!(await settled())) await new Promise((res) => setTimeout(res, 100));
      const from = at(Number(BigInt(lateRow.us) / 1000n) - 1);
      const held = await exportAs('adminA', { from });
      expect(held.events.map((e) => e.id)).not.toContain(laterRow.id);
      expect(held.events.map((e) => e.id)).not.toContain(lateRow.id);
      expect(BigInt(Date.parse(held.end!.until)) * 1000n).toBeLessThan(BigInt(lateRow.us));

      await late.query('COMMIT');
      let delivered: string[] = [];
      // Any other transaction open on the database (another test file's) holds them back too, for as long as it lasts.
      for (let i = 0; i < 150 && delivered.length < 2; i++) {
        const r = await exportAs('adminA', { cursor: held.end!.cursor });
        delivered = r.events.filter((e) => e.action.startsWith('export.')).map((e) => e.id);
        if (delivered.length < 2) await new Promise((res) => setTimeout(res, 200));
      }
      expect(delivered).toEqual([lateRow.id, laterRow.id]);
    } finally {
      await late.query('ROLLBACK').catch(() => undefined);
      await late.end();
      await other.end();
    }
  });

  it('refuses the 61st request of a minute from one address with 429 and Retry-After', async () => {
    const empty = { from: at(BASE - DAY), to: at(BASE - DAY) };
    for (let i = 0; i < AUDIT_EXPORT.perMinute; i++) expect((await exportAs('adminA', empty, '10.79.0.1')).status).toBe(200);
    const refused = await exportAs('adminA', empty, '10.79.0.1');
    expect(refused).toMatchObject({ status: 429, body: { code: 'rate_limited', retryAfter: expect.any(Number) } });
  });

  describe('reading in batches', () => {
    let repo: AuditExportRepository;
    let reads: jest.SpyInstance;
    let onRead: (call: number) => Promise<void>;

    beforeEach(() => {
      repo = t.app.get(AuditExportRepository);
      const real = repo.batch.bind(repo);
      onRead = async () => undefined;
      reads = jest.spyOn(repo, 'batch').mockImplementation(async (...args) => {
        await onRead(reads.mock.calls.length);
        return real(...args);
      });
    });
    afterEach(() => reads.mockRestore());

    it('reads a batch of 1,000 events at a time: three for organization A', async () => {
      const r = await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 100_000 });
      expect(r.end!.count).toBe(2503);
      expect(reads).toHaveBeenCalledTimes(3);
    });

    it('reads no further batch once the client has disconnected mid-stream', async () => {
      const url = new URL(`${t.baseUrl}/api/v1/audit-logs/export?${new URLSearchParams({ ...DAY_OF_EVENTS, limit: '100000' })}`);
      let serverSocket: Socket | null = null;
      t.http.once('connection', (s: Socket) => (serverSocket = s));
      let client: ClientRequest | null = null;
      let received = 0;
      let firstChunk!: () => void;
      const streaming = new Promise<void>((resolve) => (firstChunk = resolve));
      const service = t.app.get(AuditExportService);
      const serve = service.export.bind(service);
      let served: Promise<void> | null = null;
      const handler = jest.spyOn(service, 'export').mockImplementation((...args) => (served = serve(...args)));
      // The second read comes once the first batch is written: the client, having received part of it, leaves then,
      // and the read goes on only once the server has seen the connection close.
      onRead = async (call) => {
        if (call !== 2) return;
        await streaming;
        const closed = new Promise<void>((resolve) => serverSocket!.once('close', () => resolve()));
        client!.socket!.resetAndDestroy();
        await closed;
        await new Promise((resolve) => setImmediate(resolve));
      };
      await new Promise<void>((resolve) => {
        client = get(url, { agent: false, headers: { authorization: `Bearer ${bearer.adminA}`, 'x-forwarded-for': '10.78.0.1' } }, (res: IncomingMessage) => {
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            firstChunk();
          });
          res.on('error', () => undefined);
          res.on('close', () => resolve());
        });
        client.on('error', () => resolve());
      });
      // The export has ended, with no read left pending.
      await served;
      handler.mockRestore();
      expect(received).toBeGreaterThan(0);
      expect(reads).toHaveBeenCalledTimes(2);
    });

    // Last in the file: the instance stays stopping.
    it('ends with more: true after the batch under way when the instance starts stopping; the cursor resumes after it', async () => {
      const drain = t.app.get(DrainState);
      onRead = async (call) => {
        if (call === 1) drain.start(60_000);
      };
      const r = await exportAs('adminA', { ...DAY_OF_EVENTS, limit: 100_000 });
      expect(r.end).toMatchObject({ count: AUDIT_EXPORT.batchSize, more: true, cursor: r.events[AUDIT_EXPORT.batchSize - 1].cursor });
      expect(reads).toHaveBeenCalledTimes(1);
      const expected = await idsWhere('org_id = $1', [p.orgA]);
      const next = await exportAs('adminA', { to: DAY_OF_EVENTS.to, cursor: r.end!.cursor, limit: 100_000 });
      expect([...r.events, ...next.events].map((e) => e.id)).toEqual(expected.slice(0, 2 * AUDIT_EXPORT.batchSize));
    });
  });
});
