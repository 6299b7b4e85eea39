import { randomUUID } from 'node:crypto';
import { OrganizationBatchRepository } from '../../../src/modules/tenancy/organizations/organization-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Organizations as the importer reads and writes them. A partner-wide technician creates one with
 * its new id among the organizations of its transaction (as OrganizationService does).
 */
describe('OrganizationBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let orgs: OrganizationBatchRepository;
  const asTech = (...more: string[]) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2, ...more], { userId: t.tech });
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const stored = async (id: string) => (await m.owner.query(`SELECT partner_id, name FROM organizations WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([OrganizationBatchRepository]);
    orgs = m.get(OrganizationBatchRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('ofPartner', () => {
    it('answers the partner’s organizations that the caller reaches', async () => {
      const listed = await m.as(asTech(), () => orgs.ofPartner(t.partnerP));
      expect(listed.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { id: t.orgA, name: `Org A ${t.label}` },
        { id: t.orgA2, name: `Org A2nd ${t.label}` },
      ]);
      expect(await m.as(asAdminA(), () => orgs.ofPartner(t.partnerP))).toEqual([{ id: t.orgA, name: `Org A ${t.label}` }]);
    });

    it('answers nothing of another partner, and nothing for a partner that does not exist', async () => {
      expect(await m.as(asTech(), () => orgs.ofPartner(t.partnerQ))).toEqual([]);
      expect(await m.as(asTech(), () => orgs.ofPartner(randomUUID()))).toEqual([]);
    });
  });

  describe('writes', () => {
    it('creates an organization under the caller’s partner and renames it', async () => {
      const id = randomUUID();
      await m.as(asTech(id), () => orgs.insert(id, t.partnerP, `Imported ${t.label}`));
      expect(await stored(id)).toEqual({ partner_id: t.partnerP, name: `Imported ${t.label}` });
      await m.as(asTech(id), () => orgs.rename(id, `Renamed ${t.label}`));
      expect(await stored(id)).toEqual({ partner_id: t.partnerP, name: `Renamed ${t.label}` });
      expect((await m.as(asTech(id), () => orgs.ofPartner(t.partnerP))).map((o) => o.id)).toContain(id);
    });

    it('refuses an organization of the same id twice', async () => {
      await expect(m.as(asTech(), () => orgs.insert(t.orgA, t.partnerP, `Again ${t.label}`))).rejects.toThrow(/duplicate key/);
      expect(await stored(t.orgA)).toEqual({ partner_id: t.partnerP, name: `Org A ${t.label}` });
    });

    it('neither creates an organization under another partner nor renames one it does not reach', async () => {
      const id = randomUUID();
      await expect(m.as(asTech(id), () => orgs.insert(id, t.partnerQ, `Planted ${t.label}`))).rejects.toThrow(/row-level security/);
      await expect(m.as(asAdminA(), () => orgs.insert(id, t.partnerP, `Planted ${t.label}`))).rejects.toThrow(/row-level security/);
      expect(await stored(id)).toBeUndefined();
      await m.as(asTech(), () => orgs.rename(t.orgB, 'Hijacked'));
      await m.as(asAdminA(), () => orgs.rename(t.orgA2, 'Hijacked'));
      expect(await stored(t.orgB)).toEqual({ partner_id: t.partnerQ, name: `Org B ${t.label}` });
      expect(await stored(t.orgA2)).toEqual({ partner_id: t.partnerP, name: `Org A2nd ${t.label}` });
    });
  });
});
