import { RulePreviewRepository, type ScanScope } from '../../../src/modules/pam/rules/preview/rule-preview.repository';
import type { SqlRuleInput } from '../../../src/modules/pam/rules/engine/rule-sql.util';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

const at = (hhmm: string) => new Date(`2026-03-01T${hhmm}:00Z`);
const TOOLS: SqlRuleInput = { matchPathGlob: 'C:\\Tools\\*' };

/**
 * The rule preview's scans over an organization's elevation requests, as the preview route runs
 * them in the caller's transaction. Organization A gets requests on the morning of 1 March 2026,
 * between 09:59 and 12:30, two of them at the same instant; organization B one in the same hours.
 */
describe('RulePreviewRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: RulePreviewRepository;
  let r: Record<'early' | 'first' | 'denied' | 'onA2' | 'tieLow' | 'tieHigh' | 'jit', string>;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const scope = (over: Partial<ScanScope> = {}): ScanScope => ({ orgId: t.orgA, windowStart: at('10:00'), asOf: at('13:00'), flowType: null, siteIds: null, ...over });
  const counts = (rows: { bucket?: Date; status: string; scanned: number; matched: number }[]) =>
    rows.map((x) => `${x.bucket ? x.bucket.toISOString().slice(11, 16) + ' ' : ''}${x.status} ${x.scanned}/${x.matched}`).sort();

  beforeAll(async () => {
    m = await startMedium([RulePreviewRepository]);
    repo = m.get(RulePreviewRepository);
    t = await seedTenants(m.owner);
    const a1 = { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1 };
    const [tieLow, tieHigh] = [
      await insertRequest(m.owner, { ...a1, requestedAt: at('11:10'), path: 'C:\\Tools\\d.exe' }),
      await insertRequest(m.owner, { ...a1, requestedAt: at('11:10'), path: 'C:\\Tools\\e.exe' }),
    ].sort();
    r = {
      early: await insertRequest(m.owner, { ...a1, requestedAt: at('09:59'), path: 'C:\\Tools\\early.exe' }),
      first: await insertRequest(m.owner, { ...a1, requestedAt: at('10:05'), path: 'C:\\Tools\\a.exe' }),
      denied: await insertRequest(m.owner, { ...a1, requestedAt: at('10:20'), status: 'denied', path: 'C:\\Other\\b.exe' }),
      onA2: await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2, requestedAt: at('10:40'), status: 'denied', path: 'C:\\Tools\\c.exe' }),
      tieLow,
      tieHigh,
      jit: await insertRequest(m.owner, { ...a1, requestedAt: at('12:30'), flowType: 'tech_jit_admin', status: 'denied', path: 'C:\\Tools\\jit.exe' }),
    };
    await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, requestedAt: at('10:30'), path: 'C:\\Tools\\theirs.exe' });
  });
  afterAll(() => m.close());

  it('answers the transaction’s time', async () => {
    const [a, b] = await m.as(asAdminA(), async () => [await repo.now(), await repo.now()]);
    expect(a).toBeInstanceOf(Date);
    expect(b).toEqual(a);
  });

  describe('bucketCounts', () => {
    it('counts the window’s requests scanned and matched per hour and status', async () => {
      const rows = await m.as(asAdminA(), () => repo.bucketCounts(scope(), TOOLS, { from: at('10:00'), to: null }));
      expect(counts(rows)).toEqual(['10:00 denied 2/1', '10:00 pending 1/1', '11:00 pending 2/2', '12:00 denied 1/0'].sort());
    });

    it('counts one slice of the window, one flow type, or some sites only', async () => {
      expect(counts(await m.as(asAdminA(), () => repo.bucketCounts(scope(), TOOLS, { from: at('11:00'), to: at('12:00') })))).toEqual(['11:00 pending 2/2']);
      expect(counts(await m.as(asAdminA(), () => repo.bucketCounts(scope({ flowType: 'tech_jit_admin' }), TOOLS, { from: at('10:00'), to: null })))).toEqual(['12:00 denied 1/0']);
      expect(counts(await m.as(asAdminA(), () => repo.bucketCounts(scope({ siteIds: [t.siteA2] }), TOOLS, { from: at('10:00'), to: null })))).toEqual(['10:00 denied 1/1']);
      expect(await m.as(asAdminA(), () => repo.bucketCounts(scope({ siteIds: [] }), TOOLS, { from: at('10:00'), to: null }))).toEqual([]);
    });

    it('stops at the end of the window', async () => {
      expect(counts(await m.as(asAdminA(), () => repo.bucketCounts(scope({ asOf: at('11:00') }), TOOLS, { from: at('10:00'), to: null })))).toEqual(['10:00 denied 2/1', '10:00 pending 1/1'].sort());
    });

    it('counts only the sites of a site-restricted caller, whatever the scope names', async () => {
      const asSiteUser = orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
      const rows = await m.as(asSiteUser, () => repo.bucketCounts(scope(), TOOLS, { from: at('10:00'), to: null }));
      expect(counts(rows)).toEqual(['10:00 denied 1/0', '10:00 pending 1/1', '11:00 pending 2/2', '12:00 denied 1/0'].sort());
    });
  });

  describe('partialBucket', () => {
    it('keeps the newest requests of an hour, ties in id order, and answers the oldest kept as the cut', async () => {
      const one = await m.as(asAdminA(), () => repo.partialBucket(scope(), TOOLS, at('11:00'), 1));
      expect(one).toEqual({ rows: [{ status: 'pending', scanned: 1, matched: 1 }], cut: { at: '2026-03-01T11:10:00.000000Z', id: r.tieHigh } });
      const all = await m.as(asAdminA(), () => repo.partialBucket(scope(), TOOLS, at('10:00'), 5));
      expect(counts(all.rows)).toEqual(['denied 2/1', 'pending 1/1']);
      expect(all.cut).toEqual({ at: '2026-03-01T10:05:00.000000Z', id: r.first });
    });

    it('answers no rows and no cut for an empty hour', async () => {
      expect(await m.as(asAdminA(), () => repo.partialBucket(scope(), TOOLS, at('08:00'), 5))).toEqual({ rows: [], cut: null });
    });
  });

  describe('sample', () => {
    it('answers the newest matches of the given hours, newest first, ties by id, at most the size', async () => {
      const rows = await m.as(asAdminA(), () => repo.sample(scope(), TOOLS, [at('10:00'), at('11:00')], null, 20));
      expect(rows.map((x) => x.id)).toEqual([r.tieHigh, r.tieLow, r.onA2, r.first]);
      expect(rows[0]).toEqual({ id: r.tieHigh, requested_at: at('11:10'), flow_type: 'uac_intercept', status: 'pending' });
      expect((await m.as(asAdminA(), () => repo.sample(scope(), TOOLS, [at('10:00'), at('11:00')], null, 2))).map((x) => x.id)).toEqual([r.tieHigh, r.tieLow]);
    });

    it('leaves out what lies before the cut, and answers nothing for no hours', async () => {
      const cut = { at: '2026-03-01T11:10:00.000000Z', id: r.tieHigh };
      expect((await m.as(asAdminA(), () => repo.sample(scope(), TOOLS, [at('10:00'), at('11:00')], cut, 20))).map((x) => x.id)).toEqual([r.tieHigh]);
      expect(await m.as(asAdminA(), () => repo.sample(scope(), TOOLS, [], null, 20))).toEqual([]);
    });
  });

  it('scans nothing of another tenant’s requests', async () => {
    const asAdminB = orgPrincipal(t.orgB, { userId: t.adminB });
    expect(await m.as(asAdminB, () => repo.bucketCounts(scope(), TOOLS, { from: at('10:00'), to: null }))).toEqual([]);
    expect(await m.as(asAdminB, () => repo.partialBucket(scope(), TOOLS, at('10:00'), 5))).toEqual({ rows: [], cut: null });
    expect(await m.as(asAdminB, () => repo.sample(scope(), TOOLS, [at('10:00'), at('11:00')], null, 20))).toEqual([]);
    expect(await m.as(asAdminA(), () => repo.bucketCounts(scope({ orgId: t.orgB }), TOOLS, { from: at('10:00'), to: null }))).toEqual([]);
  });
});
