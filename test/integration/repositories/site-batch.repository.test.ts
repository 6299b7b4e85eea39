import { randomUUID } from 'node:crypto';
import { SiteBatchRepository } from '../../../src/modules/tenancy/sites/site-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Sites as the importer reads and writes them, many organizations at a time, in the caller's transaction. */
describe('SiteBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let sites: SiteBatchRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const stored = async (id: string) => (await m.owner.query(`SELECT org_id, name, timezone FROM sites WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([SiteBatchRepository]);
    sites = m.get(SiteBatchRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('ofOrgs', () => {
    it('answers the sites of every organization asked for, with name and time zone', async () => {
      const listed = await m.as(asTech(), () => sites.ofOrgs([t.orgA, t.orgA2]));
      expect(listed.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { id: t.siteA1, org_id: t.orgA, name: 'A1', timezone: 'UTC' },
        { id: t.siteA2, org_id: t.orgA, name: 'A2', timezone: 'UTC' },
        { id: t.siteX1, org_id: t.orgA2, name: 'X1', timezone: 'UTC' },
      ]);
    });

    it('answers nothing for no organizations, and nothing of an organization the caller does not reach', async () => {
      expect(await m.as(asTech(), () => sites.ofOrgs([]))).toEqual([]);
      expect((await m.as(asAdminA(), () => sites.ofOrgs([t.orgA, t.orgA2, t.orgB]))).map((s) => s.id).sort()).toEqual([t.siteA1, t.siteA2].sort());
      expect(await m.as(asAdminA(), () => sites.ofOrgs([t.orgB]))).toEqual([]);
    });
  });

  describe('writes', () => {
    it('creates a site with the id the caller chose, and renames it and changes its time zone', async () => {
      const id = randomUUID();
      await m.as(asAdminA(), () => sites.insert({ id, orgId: t.orgA, name: `Imported ${t.label}`, timezone: 'Europe/Berlin' }));
      expect(await stored(id)).toEqual({ org_id: t.orgA, name: `Imported ${t.label}`, timezone: 'Europe/Berlin' });
      await m.as(asAdminA(), () => sites.update(id, `Renamed ${t.label}`, 'America/New_York'));
      expect(await stored(id)).toEqual({ org_id: t.orgA, name: `Renamed ${t.label}`, timezone: 'America/New_York' });
    });

    it('refuses a second site of the same name in an organization, and a second site of the same id', async () => {
      await expect(m.as(asAdminA(), () => sites.insert({ id: randomUUID(), orgId: t.orgA, name: 'A1', timezone: 'UTC' }))).rejects.toThrow(/duplicate key/);
      await expect(m.as(asAdminA(), () => sites.insert({ id: t.siteA1, orgId: t.orgA, name: `Other ${t.label}`, timezone: 'UTC' }))).rejects.toThrow(/duplicate key/);
      await expect(m.as(asAdminA(), () => sites.update(t.siteA2, 'A1', 'UTC'))).rejects.toThrow(/duplicate key/);
      expect(await stored(t.siteA2)).toEqual({ org_id: t.orgA, name: 'A2', timezone: 'UTC' });
    });

    it('neither creates a site in another tenant nor changes one of it', async () => {
      await expect(m.as(asAdminA(), () => sites.insert({ id: randomUUID(), orgId: t.orgB, name: `Planted ${t.label}`, timezone: 'UTC' }))).rejects.toThrow(/row-level security/);
      await m.as(asAdminA(), () => sites.update(t.siteB1, 'Hijacked', 'UTC'));
      expect(await stored(t.siteB1)).toEqual({ org_id: t.orgB, name: 'B1', timezone: 'UTC' });
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM sites WHERE name = $1`, [`Planted ${t.label}`])).rows[0].n).toBe(0);
    });
  });
});
