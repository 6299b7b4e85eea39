import { randomInt, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { LAST_ID, isoMicros } from '../../../src/modules/audit/audit-cursor.util';
import { AuditExportRepository } from '../../../src/modules/audit/audit-export.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The audit export's two reads. Events are written as the owner at instants of this file's own
 * (a random microsecond of 2003, so no other file's events fall between them): two of them share
 * one microsecond, so the order among equal times is the id's.
 */
describe('AuditExportRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let audit: AuditExportRepository;
  let base: bigint;
  /** The events up to the export bound of these tests, in export order, each with the tenant that owns it. */
  const events: { id: string; us: bigint; owner: string }[] = [];
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const from = () => ({ us: base - 1n, id: LAST_ID });
  const until = () => base + 100n;
  const idsOf = (rows: { id: string }[]) => rows.map((r) => r.id);
  const idsWhere = (...owners: string[]) => events.filter((e) => owners.includes(e.owner)).map((e) => e.id);

  beforeAll(async () => {
    m = await startMedium([AuditExportRepository]);
    audit = m.get(AuditExportRepository);
    t = await seedTenants(m.owner);
    base = BigInt(Date.UTC(2003, 0, 1)) * 1000n + BigInt(randomInt(0, 2 ** 40));
    const tied = [randomUUID(), randomUUID()].sort();
    const rows: { id: string; us: bigint; owner: string; org: string | null; partner: string | null }[] = [
      { id: randomUUID(), us: base, owner: 'A', org: t.orgA, partner: null },
      { id: tied[0], us: base + 1n, owner: 'B', org: t.orgB, partner: null },
      { id: tied[1], us: base + 1n, owner: 'A', org: t.orgA, partner: null },
      { id: randomUUID(), us: base + 2n, owner: 'P', org: null, partner: t.partnerP },
      { id: randomUUID(), us: base + 3n, owner: 'A2', org: t.orgA2, partner: null },
      { id: randomUUID(), us: base + 4n, owner: 'system', org: null, partner: null },
      { id: randomUUID(), us: base + 100n, owner: 'A', org: t.orgA, partner: null },
      { id: randomUUID(), us: base + 101n, owner: 'A', org: t.orgA, partner: null },
    ];
    for (const r of rows) {
      await m.owner.query(`INSERT INTO audit_logs (id, org_id, partner_id, actor_type, action, details, created_at) VALUES ($1, $2, $3, 'system', 'export.test', $4, $5)`, [
        r.id,
        r.org,
        r.partner,
        { label: t.label },
        isoMicros(r.us),
      ]);
      if (r.us <= base + 100n) events.push({ id: r.id, us: r.us, owner: r.owner });
    }
  });
  afterAll(() => m.close());

  describe('batch', () => {
    it('reads every event after a position up to an instant inclusive, in time then id order, with its time in microseconds', async () => {
      const rows = await m.system(() => audit.batch(from(), until(), 100, null));
      expect(idsOf(rows)).toEqual(events.map((e) => e.id));
      expect(rows[0]).toMatchObject({ id: events[0].id, org_id: t.orgA, partner_id: null, actor_type: 'system', action: 'export.test', details: { label: t.label }, created_us: String(base) });
    });

    it('stops at the limit and resumes strictly after the last position read, within one microsecond too', async () => {
      const first = await m.system(() => audit.batch(from(), until(), 2, null));
      expect(idsOf(first)).toEqual(events.slice(0, 2).map((e) => e.id));
      const last = first[first.length - 1];
      const next = await m.system(() => audit.batch({ us: BigInt(last.created_us), id: last.id }, until(), 2, null));
      expect(idsOf(next)).toEqual(events.slice(2, 4).map((e) => e.id));
      expect(await m.system(() => audit.batch({ us: base + 100n, id: LAST_ID }, until(), 10, null))).toEqual([]);
    });

    it('reads one organization’s events when it is named', async () => {
      expect(idsOf(await m.system(() => audit.batch(from(), until(), 100, t.orgA)))).toEqual(idsWhere('A'));
      expect(idsOf(await m.system(() => audit.batch(from(), until(), 1, t.orgA)))).toEqual(idsWhere('A').slice(0, 1));
      expect(await m.system(() => audit.batch(from(), until(), 100, randomUUID()))).toEqual([]);
    });

    it('reads only the events the caller’s tenant may see', async () => {
      expect(idsOf(await m.as(asAdminA(), () => audit.batch(from(), until(), 100, null)))).toEqual(idsWhere('A'));
      expect(idsOf(await m.as(asTech(), () => audit.batch(from(), until(), 100, null)))).toEqual(idsWhere('A', 'P', 'A2'));
      expect(idsOf(await m.as(asTech(false), () => audit.batch(from(), until(), 100, null)))).toEqual(idsWhere('A', 'A2'));
    });

    it('reads nothing of another tenant’s organization', async () => {
      expect(await m.as(asAdminA(), () => audit.batch(from(), until(), 100, t.orgB))).toEqual([]);
      expect(await m.as(asTech(), () => audit.batch(from(), until(), 100, t.orgB))).toEqual([]);
    });
  });

  describe('settledMicros', () => {
    it('answers the database’s clock less the settle window at most', async () => {
      const settled = await m.system(() => audit.settledMicros(30));
      const { rows } = await m.owner.query<{ now_us: string }>(`SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8 AS now_us`);
      expect(settled).toBeLessThanOrEqual(BigInt(rows[0].now_us) - 30_000_000n);
    });

    it('stays before the start of a transaction of the request role that has written and not yet ended', async () => {
      const writer = new Client({ connectionString: process.env.DATABASE_APP_URL });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query('SELECT txid_current()');
        const { rows } = await writer.query<{ start_us: string }>(`SELECT (extract(epoch FROM now()) * 1000000)::int8 AS start_us`);
        const open = BigInt(rows[0].start_us);
        expect(await m.system(() => audit.settledMicros(0))).toBeLessThan(open);
        await writer.query('COMMIT');
        // Other files' transactions of the run may hold the bound back for a while: wait until it passes the committed one.
        let settled = await m.system(() => audit.settledMicros(0));
        while (settled <= open) {
          await new Promise((res) => setTimeout(res, 50));
          settled = await m.system(() => audit.settledMicros(0));
        }
        expect(settled).toBeGreaterThan(open);
      } finally {
        await writer.end();
      }
    });
  });
});
