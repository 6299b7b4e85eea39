import { randomUUID } from 'node:crypto';
import { ImportLinkRepository, type LinkWrite, type MatchWrite } from '../../../src/modules/imports/import-link.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The links from a source system's records to the rows they became, and the contacts held back as
 * possible matches. Links of organizations are the organizations'; links of the partner itself
 * (org_id null) need a caller with the whole partner.
 */
describe('ImportLinkRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let links: ImportLinkRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const link = (over: Partial<LinkWrite> & Pick<LinkWrite, 'kind' | 'externalId' | 'localId'>): LinkWrite => ({ namespace: null, orgId: t.orgA, ...over });
  const byExternal = <T extends { external_id: string }>(rows: T[]) => [...rows].sort((a, b) => a.external_id.localeCompare(b.external_id));
  const importOf = async (orgId: string, partnerId: string) =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO imports (partner_id, org_id, format, dry_run, overwrite, phases, total_items, actor_type, scope) VALUES ($1, $2, 'contacts_csv', false, false, '{contacts}', 1, 'user', '{}') RETURNING id`,
        [partnerId, orgId],
      )
    ).rows[0].id;
  const held = (orgId: string, over: Partial<MatchWrite> = {}): MatchWrite => ({
    org_id: orgId,
    source_ref: 'line 2',
    external_id: `ext-${randomUUID()}`,
    source: { name: 'Held', email: `held@${t.label}.example`, phones: [], title: null, notes: null, siteId: null, externalId: 'x' },
    candidate_id: null as unknown as string,
    reason: 'email',
    ...over,
  });

  beforeAll(async () => {
    m = await startMedium([ImportLinkRepository]);
    links = m.get(ImportLinkRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('links', () => {
    it('saves links of one source and answers them by kind', async () => {
      const ns = randomUUID();
      await m.as(asTech(), () =>
        links.saveLinks(t.partnerP, 'acme', [
          link({ kind: 'device', externalId: 'd-1', localId: t.deviceA1 }),
          link({ kind: 'device', externalId: 'd-2', localId: t.deviceA2 }),
          link({ kind: 'location', namespace: ns, externalId: 'l-1', localId: t.siteA1 }),
          link({ kind: 'script', orgId: null, externalId: 's-1', localId: t.siteA2 }),
        ]),
      );
      expect(byExternal(await m.as(asTech(), () => links.links(t.partnerP, 'acme', 'device')))).toEqual([
        { namespace: null, external_id: 'd-1', local_id: t.deviceA1 },
        { namespace: null, external_id: 'd-2', local_id: t.deviceA2 },
      ]);
      expect(await m.as(asTech(), () => links.links(t.partnerP, 'acme', 'location'))).toEqual([{ namespace: ns, external_id: 'l-1', local_id: t.siteA1 }]);
      expect(await m.as(asTech(), () => links.links(t.partnerP, 'acme', 'script'))).toEqual([{ namespace: null, external_id: 's-1', local_id: t.siteA2 }]);
      expect(await m.as(asTech(), () => links.links(t.partnerP, 'other', 'device'))).toEqual([]);
    });

    it('moves a link to its new row on a second save, keeps one link per external id, and writes nothing for none', async () => {
      await m.as(asTech(), () => links.saveLinks(t.partnerP, 'moves', [link({ kind: 'device', externalId: 'd-1', localId: t.deviceA1 })]));
      await m.as(asTech(), () => links.saveLinks(t.partnerP, 'moves', [link({ kind: 'device', externalId: 'd-1', orgId: t.orgA2, localId: t.deviceX1 })]));
      await m.as(asTech(), () => links.saveLinks(t.partnerP, 'moves', []));
      expect((await m.owner.query(`SELECT org_id, local_id FROM import_links WHERE partner_id = $1 AND source_system = 'moves'`, [t.partnerP])).rows).toEqual([
        { org_id: t.orgA2, local_id: t.deviceX1 },
      ]);
    });

    it('answers an organization’s device links from every source', async () => {
      await m.as(asAdminA(), () => links.saveLinks(t.partnerP, 'csv-a', [link({ kind: 'device', externalId: 'csv-1', localId: t.deviceA1 })]));
      await m.as(asAdminA(), () => links.saveLinks(t.partnerP, 'csv-b', [link({ kind: 'device', externalId: 'csv-2', localId: t.deviceA2 }), link({ kind: 'location', externalId: 'loc', localId: t.siteA1 })]));
      const ofA = (await m.as(asAdminA(), () => links.deviceLinksOfOrg(t.orgA))).filter((l) => l.external_id.startsWith('csv-'));
      expect(byExternal(ofA)).toEqual([
        { external_id: 'csv-1', local_id: t.deviceA1 },
        { external_id: 'csv-2', local_id: t.deviceA2 },
      ]);
    });

    it('keeps partner links to callers with the whole partner, and shows and writes nothing of another tenant', async () => {
      await expect(m.as(asTech(false), () => links.saveLinks(t.partnerP, 'narrow', [link({ kind: 'policy', orgId: null, externalId: 'p-1', localId: randomUUID() })]))).rejects.toThrow(
        /partner_wide_write_denied/,
      );
      await expect(m.as(asAdminA(), () => links.saveLinks(t.partnerQ, 'acme', [link({ kind: 'device', orgId: t.orgB, externalId: 'b-1', localId: t.deviceB1 })]))).rejects.toThrow(
        /row-level security/,
      );
      await m.owner.query(`INSERT INTO import_links (partner_id, source_system, kind, external_id, org_id, local_id) VALUES ($1, 'acme', 'device', 'b-1', $2, $3)`, [
        t.partnerQ,
        t.orgB,
        t.deviceB1,
      ]);
      expect(await m.as(asAdminA(), () => links.links(t.partnerQ, 'acme', 'device'))).toEqual([]);
      expect(await m.as(asAdminA(), () => links.deviceLinksOfOrg(t.orgB))).toEqual([]);
      expect(await m.as(asAdminB(), () => links.links(t.partnerP, 'acme', 'device'))).toEqual([]);
      expect(await m.as(asAdminB(), () => links.deviceLinksOfOrg(t.orgB))).toEqual([{ external_id: 'b-1', local_id: t.deviceB1 }]);
    });

    it('takes the partner’s import lock for the rest of the transaction only', async () => {
      const lockKey = `import:${t.partnerP}`;
      const held = async () =>
        (
          await m.owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = (hashtext($1)::bigint & 4294967295)::oid`, [
            lockKey,
          ])
        ).rows[0].n;
      const during = await m.as(asTech(), async () => {
        await links.lockPartner(t.partnerP);
        return held();
      });
      expect(during).toBe(1);
      expect(await held()).toBe(0);
    });
  });

  describe('held-back matches', () => {
    it('writes a batch of matches to an import and answers the pending ones of the organizations asked for', async () => {
      const [importA, importA2] = [await importOf(t.orgA, t.partnerP), await importOf(t.orgA2, t.partnerP)];
      const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO contacts (org_id, name, email) VALUES ($1, 'Candidate', $2) RETURNING id`, [t.orgA, `held@${t.label}.example`]);
      const a = held(t.orgA, { candidate_id: rows[0].id });
      const byName = held(t.orgA, { reason: 'name', source_ref: 'line 3' });
      await m.as(asTech(), () => links.insertMatches(importA, [a, byName]));
      await m.as(asTech(), () => links.insertMatches(importA2, [held(t.orgA2)]));
      await m.as(asTech(), () => links.insertMatches(importA, []));
      const pending = await m.as(asTech(), () => links.pendingMatches([t.orgA]));
      expect(byExternal(pending)).toEqual(
        byExternal([
          { org_id: t.orgA, external_id: a.external_id, candidate_id: rows[0].id, reason: 'email' },
          { org_id: t.orgA, external_id: byName.external_id, candidate_id: null, reason: 'name' },
        ]),
      );
      expect((await m.as(asTech(), () => links.pendingMatches([t.orgA, t.orgA2]))).length).toBe(3);
      expect(await m.as(asTech(), () => links.pendingMatches([]))).toEqual([]);
      await m.owner.query(`UPDATE import_matches SET status = 'merged' WHERE external_id = $1`, [a.external_id]);
      expect((await m.as(asTech(), () => links.pendingMatches([t.orgA]))).map((p) => p.external_id)).toEqual([byName.external_id]);
    });

    it('refuses a second pending match of one external id in an organization', async () => {
      const importA = await importOf(t.orgA, t.partnerP);
      const first = held(t.orgA);
      await m.as(asAdminA(), () => links.insertMatches(importA, [first]));
      await expect(m.as(asAdminA(), () => links.insertMatches(importA, [held(t.orgA, { external_id: first.external_id })]))).rejects.toThrow(/duplicate key/);
    });

    it('neither shows nor writes matches of another tenant', async () => {
      const importB = await importOf(t.orgB, t.partnerQ);
      await m.as(asAdminB(), () => links.insertMatches(importB, [held(t.orgB)]));
      expect(await m.as(asAdminA(), () => links.pendingMatches([t.orgB]))).toEqual([]);
      await expect(m.as(asAdminA(), () => links.insertMatches(importB, [held(t.orgB)]))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM import_matches WHERE import_id = $1`, [importB])).rows[0].n).toBe(1);
    });
  });
});
