import { PartnerEntity } from '../../../src/modules/tenancy/partners/partner.entity';
import { PartnerRepository } from '../../../src/modules/tenancy/partners/partner.repository';
import { partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Partners are created only in system context (the bootstrap-admin command); a tenant creates none. */
describe('PartnerRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let partners: PartnerRepository;

  beforeAll(async () => {
    m = await startMedium([PartnerRepository], {}, { entities: [PartnerEntity] });
    partners = m.get(PartnerRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('creates a partner with a fresh id and the active status of the column default', async () => {
    const id = await m.system(() => partners.insert(`Bootstrap ${t.label}`));
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await m.owner.query(`SELECT name, status FROM partners WHERE id = $1`, [id])).rows).toEqual([{ name: `Bootstrap ${t.label}`, status: 'active' }]);
    const again = await m.system(() => partners.insert(`Bootstrap ${t.label}`));
    expect(again).not.toBe(id);
  });

  it('refuses a partner created in a partner’s context, and an empty name', async () => {
    await expect(m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech }), () => partners.insert(`Planted ${t.label}`))).rejects.toThrow(/row-level security/);
    await expect(m.system(() => partners.insert(''))).rejects.toThrow(/check constraint/);
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM partners WHERE name = $1`, [`Planted ${t.label}`])).rows[0].n).toBe(0);
  });
});
