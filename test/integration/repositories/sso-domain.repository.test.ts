import { randomUUID } from 'node:crypto';
import { SsoDomainEntity } from '../../../src/modules/sso/domains/sso-domain.entity';
import { SsoDomainRepository } from '../../../src/modules/sso/domains/sso-domain.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Domains an organization claims for SSO, as administrators list and claim them, and as the
 * re-verification job (system context) marks what DNS showed. Names carry the file's label.
 */
describe('SsoDomainRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: SsoDomainRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const name = (n: string) => `${n}.${t.label}.example`;
  /** A claim arranged through the owner connection; verified ones last seen `seenHoursAgo` ago. */
  const arrange = async (orgId: string, domain: string, over: { seenHoursAgo?: number; checkedAt?: string | null } = {}) => {
    const verified = over.seenHoursAgo !== undefined;
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_seen_at, last_checked_at)
       VALUES ($1, $2, 'tok', $3, CASE WHEN $3 THEN '2026-01-01T00:00:00Z'::timestamptz END,
               CASE WHEN $3 THEN now() - make_interval(hours => $4::int) END, $5::timestamptz) RETURNING id`,
      [orgId, domain, verified, over.seenHoursAgo ?? 0, over.checkedAt ?? null],
    );
    return rows[0].id;
  };
  const stored = async (id: string) => (await m.owner.query(`SELECT * FROM sso_verified_domains WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([SsoDomainRepository], {}, { entities: [SsoDomainEntity] });
    repo = m.get(SsoDomainRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('insert, find and delete', () => {
    it('claims a domain unverified, and answers null for the organization’s second claim of it', async () => {
      const row = await m.as(asAdminA(), () => repo.insert({ orgId: t.orgA, domain: name('claimed'), token: 'rmm-verify=1', createdBy: t.adminA }));
      expect(row).toMatchObject({ orgId: t.orgA, domain: name('claimed'), token: 'rmm-verify=1', verified: false, verifiedAt: null, createdBy: t.adminA });
      expect(await m.as(asAdminA(), () => repo.find(row!.id))).toEqual(row);
      expect(await m.as(asAdminA(), () => repo.insert({ orgId: t.orgA, domain: name('claimed'), token: 'rmm-verify=2', createdBy: t.adminA }))).toBeNull();
      expect((await m.owner.query(`SELECT token FROM sso_verified_domains WHERE org_id = $1 AND domain = $2`, [t.orgA, name('claimed')])).rows).toEqual([{ token: 'rmm-verify=1' }]);
    });

    it('lets two organizations claim the same domain', async () => {
      await m.as(asAdminA(), () => repo.insert({ orgId: t.orgA, domain: name('both'), token: 'a', createdBy: null }));
      expect(await m.as(asAdminB(), () => repo.insert({ orgId: t.orgB, domain: name('both'), token: 'b', createdBy: null }))).toMatchObject({ orgId: t.orgB });
    });

    it('refuses a claim in another tenant’s organization, and a domain not written in lower case', async () => {
      await expect(m.as(asAdminB(), () => repo.insert({ orgId: t.orgA, domain: name('planted'), token: 'x', createdBy: null }))).rejects.toThrow(/row-level security/);
      await expect(m.as(asAdminA(), () => repo.insert({ orgId: t.orgA, domain: name('UPPER'), token: 'x', createdBy: null }))).rejects.toThrow(/check constraint/);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM sso_verified_domains WHERE domain IN ($1, $2)`, [name('planted'), name('UPPER')])).rows[0].n).toBe(0);
    });

    it('deletes a claim and answers it as it was; null for a missing one and for another tenant’s, which stays', async () => {
      const id = await arrange(t.orgA, name('deleted'), { seenHoursAgo: 1 });
      expect(await m.as(asAdminA(), () => repo.delete(id))).toMatchObject({ id, domain: name('deleted'), verified: true });
      expect(await stored(id)).toBeUndefined();
      expect(await m.as(asAdminA(), () => repo.delete(id))).toBeNull();
      const theirs = await arrange(t.orgB, name('kept'));
      expect(await m.as(asAdminA(), () => repo.delete(theirs))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.find(theirs))).toBeNull();
      expect(await stored(theirs)).toBeDefined();
    });
  });

  describe('list and verifiedOrgIds', () => {
    let ids: { a1: string; a2: string; x: string; b: string };

    beforeAll(async () => {
      ids = {
        a2: await arrange(t.orgA, name('zeta')),
        a1: await arrange(t.orgA, name('alpha')),
        x: await arrange(t.orgA2, name('alpha'), { seenHoursAgo: 1 }),
        b: await arrange(t.orgB, name('alpha'), { seenHoursAgo: 1 }),
      };
    });

    it('lists an organization’s claims by domain', async () => {
      const rows = await m.as(asAdminA(), () => repo.list(t.orgA));
      const mine = rows.map((r) => r.id).filter((id) => id === ids.a1 || id === ids.a2);
      expect(mine).toEqual([ids.a1, ids.a2]);
      expect(rows.every((r) => r.orgId === t.orgA)).toBe(true);
      expect(rows.map((r) => r.domain)).toEqual([...rows.map((r) => r.domain)].sort());
    });

    it('lists every claim the caller reaches by organization then domain, and none of another tenant', async () => {
      const rows = await m.as(asTech(), () => repo.list(null));
      expect(new Set(rows.map((r) => r.orgId))).toEqual(new Set([t.orgA, t.orgA2]));
      const keys = rows.map((r) => `${r.orgId} ${r.domain}`);
      expect(keys).toEqual([...keys].sort());
      expect(rows.map((r) => r.id)).toEqual(expect.arrayContaining([ids.a1, ids.a2, ids.x]));
      expect(await m.as(asAdminB(), () => repo.list(t.orgA))).toEqual([]);
    });

    it('names the organizations that verified a domain, in order, only those the caller sees', async () => {
      expect(await m.system(() => repo.verifiedOrgIds(name('alpha')))).toEqual([t.orgA2, t.orgB].sort());
      expect(await m.as(asTech(), () => repo.verifiedOrgIds(name('alpha')))).toEqual([t.orgA2]);
      expect(await m.system(() => repo.verifiedOrgIds(name('nowhere')))).toEqual([]);
    });

    it('sees an organization only when the caller reaches it', async () => {
      expect(await m.as(asAdminA(), () => repo.organizationVisible(t.orgA))).toBe(true);
      expect(await m.as(asAdminA(), () => repo.organizationVisible(t.orgB))).toBe(false);
      expect(await m.as(asAdminA(), () => repo.organizationVisible(randomUUID()))).toBe(false);
    });
  });

  describe('the re-verification job', () => {
    it('marks a domain seen: verified, keeping its first verification time', async () => {
      const fresh = await arrange(t.orgA, name('fresh'));
      const row = await m.system(() => repo.markSeen(fresh));
      expect(row).toMatchObject({ verified: true, verifiedAt: expect.any(Date), lastSeenAt: expect.any(Date), lastCheckedAt: expect.any(Date) });
      const again = await arrange(t.orgA, name('again'), { seenHoursAgo: 100 });
      const seen = await m.system(() => repo.markSeen(again));
      expect(seen!.verifiedAt).toEqual(new Date('2026-01-01T00:00:00Z'));
      expect(seen!.lastSeenAt!.getTime()).toBeGreaterThan(Date.now() - 3600_000);
      expect(await m.system(() => repo.markSeen(randomUUID()))).toBeNull();
    });

    it('marks a domain checked without changing its verification', async () => {
      const id = await arrange(t.orgA, name('checked'), { seenHoursAgo: 5 });
      const before = await stored(id);
      const row = await m.system(() => repo.markChecked(id));
      expect(row).toMatchObject({ verified: true, lastSeenAt: before.last_seen_at, lastCheckedAt: expect.any(Date) });
      expect(await m.system(() => repo.markChecked(randomUUID()))).toBeNull();
    });

    it('un-verifies a domain not seen for longer than the grace, once, and not one seen within it', async () => {
      const stale = await arrange(t.orgA, name('stale'), { seenHoursAgo: 80 });
      const recent = await arrange(t.orgA, name('recent'), { seenHoursAgo: 10 });
      expect(await m.system(() => repo.unverifyIfStale(recent, 72))).toBeNull();
      expect(await stored(recent)).toMatchObject({ verified: true });
      const [first, second] = await Promise.all([m.system(() => repo.unverifyIfStale(stale, 72)), m.system(() => repo.unverifyIfStale(stale, 72))]);
      expect([first, second].filter((r) => r !== null)).toEqual([expect.objectContaining({ id: stale, verified: false, verifiedAt: null })]);
      expect(await stored(stale)).toMatchObject({ verified: false, verified_at: null, last_checked_at: expect.any(Date) });
    });

    it('lists verified domains never checked first, then the longest unchecked', async () => {
      const never = await arrange(t.orgA2, name('never'), { seenHoursAgo: 1 });
      const old = await arrange(t.orgA2, name('old'), { seenHoursAgo: 1, checkedAt: '2026-01-01T00:00:00Z' });
      const recent = await arrange(t.orgA2, name('lately'), { seenHoursAgo: 1, checkedAt: '2026-06-01T00:00:00Z' });
      const unverified = await arrange(t.orgA2, name('unverified'));
      const all = (await m.system(() => repo.listVerified())).map((r) => r.id);
      const mine = all.filter((id) => [never, old, recent, unverified].includes(id));
      expect(mine).toEqual([never, old, recent]);
    });

    it('changes nothing of another tenant when run under a tenant’s scope', async () => {
      const theirs = await arrange(t.orgB, name('theirs'), { seenHoursAgo: 100 });
      expect(await m.as(asAdminA(), () => repo.unverifyIfStale(theirs, 1))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.markChecked(theirs))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.listVerified())).not.toContainEqual(expect.objectContaining({ id: theirs }));
      expect(await stored(theirs)).toMatchObject({ verified: true, last_checked_at: null });
    });
  });
});
