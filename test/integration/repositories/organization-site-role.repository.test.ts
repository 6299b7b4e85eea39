import { randomUUID } from 'node:crypto';
import { OrganizationEntity } from '../../../src/modules/tenancy/organizations/organization.entity';
import { OrganizationRepository } from '../../../src/modules/tenancy/organizations/organization.repository';
import { RoleEntity } from '../../../src/modules/tenancy/roles/role.entity';
import { RoleRepository } from '../../../src/modules/tenancy/roles/role.repository';
import { SiteEntity } from '../../../src/modules/tenancy/sites/site.entity';
import { SiteRepository } from '../../../src/modules/tenancy/sites/site.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** The tenancy tables an administrator shapes: organizations, their sites, and roles. */
describe('OrganizationRepository, SiteRepository and RoleRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let organizations: OrganizationRepository;
  let sites: SiteRepository;
  let roles: RoleRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });

  beforeAll(async () => {
    m = await startMedium([OrganizationRepository, SiteRepository, RoleRepository], {}, { entities: [OrganizationEntity, SiteEntity, RoleEntity] });
    organizations = m.get(OrganizationRepository);
    sites = m.get(SiteRepository);
    roles = m.get(RoleRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('OrganizationRepository', () => {
    it('lists the organizations the caller reaches by name, and nothing of another partner', async () => {
      const listed = await m.as(asTech(), () => organizations.list());
      expect(listed.map((o) => o.id)).toEqual([t.orgA, t.orgA2]);
      expect(listed[0]).toEqual({ id: t.orgA, partnerId: t.partnerP, name: `Org A ${t.label}`, status: 'active', createdAt: expect.any(String), updatedAt: expect.any(String) });
      expect(await m.as(asTech(), () => organizations.find(t.orgB))).toBeNull();
    });

    it('lists timestamps exactly as Date.toISOString writes the stored value: UTC, milliseconds truncated from microseconds', async () => {
      await m.owner.query(`UPDATE organizations SET created_at = '2026-01-02 03:04:05.678999+00', updated_at = '1999-12-31 23:59:59.9999+05' WHERE id = $1`, [t.orgA2]);
      const listed = (await m.as(asTech(), () => organizations.list())).find((o) => o.id === t.orgA2)!;
      const stored = (await m.as(asTech(), () => organizations.find(t.orgA2)))!;
      expect([listed.createdAt, listed.updatedAt]).toEqual([stored.createdAt.toISOString(), stored.updatedAt.toISOString()]);
      expect([listed.createdAt, listed.updatedAt]).toEqual(['2026-01-02T03:04:05.678Z', '1999-12-31T18:59:59.999Z']);
    });

    it('creates an organization under the technician’s partner once the transaction reaches its id, as the service rescopes', async () => {
      const id = randomUUID();
      await expect(m.as(asTech(), () => organizations.insert({ id, partnerId: t.partnerP, name: `New ${t.label}`, status: 'active' }))).rejects.toThrow(/row-level security/);
      const reaching = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2, id], { userId: t.tech });
      const created = await m.as(reaching, () => organizations.insert({ id, partnerId: t.partnerP, name: `New ${t.label}`, status: 'active' }));
      expect(created).toMatchObject({ id, partnerId: t.partnerP, createdAt: expect.any(Date), updatedAt: expect.any(Date) });
      expect((await m.owner.query(`SELECT partner_id, name FROM organizations WHERE id = $1`, [id])).rows).toEqual([{ partner_id: t.partnerP, name: `New ${t.label}` }]);
    });

    it('refuses to create an organization under another partner, even with its id in reach', async () => {
      const id = randomUUID();
      const reaching = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2, id], { userId: t.tech });
      await expect(m.as(reaching, () => organizations.insert({ id, partnerId: t.partnerQ, name: 'planted', status: 'active' }))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT 1 FROM organizations WHERE id = $1`, [id])).rowCount).toBe(0);
    });

    it('renames the caller’s organization, and leaves one of another partner as it was', async () => {
      const renamed = await m.as(asAdminA(), () => organizations.update(t.orgA, { name: `Org A renamed ${t.label}` }));
      expect(renamed).toMatchObject({ id: t.orgA, name: `Org A renamed ${t.label}`, status: 'active' });
      expect(renamed!.updatedAt.getTime()).toBeGreaterThanOrEqual(renamed!.createdAt.getTime());
      expect(await m.as(asAdminA(), () => organizations.update(t.orgB, { name: 'hijacked' }))).toBeNull();
      expect((await m.owner.query(`SELECT name FROM organizations WHERE id = $1`, [t.orgB])).rows[0].name).toBe(`Org B ${t.label}`);
    });
  });

  describe('SiteRepository', () => {
    it('lists the sites of the caller’s organizations by name, limited to the given sites', async () => {
      const byOrg = t.orgA < t.orgA2 ? [t.siteA1, t.siteA2, t.siteX1] : [t.siteX1, t.siteA1, t.siteA2];
      expect((await m.as(asTech(), () => sites.list({ siteIds: null }))).map((s) => s.id)).toEqual(byOrg);
      expect((await m.as(asAdminA(), () => sites.list({ orgId: t.orgA, siteIds: null }))).map((s) => s.id)).toEqual([t.siteA1, t.siteA2]);
      expect((await m.as(asAdminA(), () => sites.list({ orgId: t.orgA, siteIds: [t.siteA2] }))).map((s) => s.id)).toEqual([t.siteA2]);
      expect(await m.as(asAdminA(), () => sites.list({ siteIds: [] }))).toEqual([]);
    });

    it('never shows another tenant’s site, even when asked for it by id', async () => {
      expect(await m.as(asAdminA(), () => sites.find(t.siteB1))).toBeNull();
      expect((await m.as(asAdminA(), () => sites.findMany([t.siteA1, t.siteB1]))).map((s) => s.id)).toEqual([t.siteA1]);
      expect(await m.as(asAdminA(), () => sites.list({ siteIds: [t.siteB1] }))).toEqual([]);
    });

    it('creates, renames and deletes a site of the caller’s organization', async () => {
      const site = await m.as(asAdminA(), () => sites.insert({ orgId: t.orgA, name: 'A3', timezone: 'Europe/Paris' }));
      expect(site).toMatchObject({ id: expect.any(String), orgId: t.orgA, name: 'A3', timezone: 'Europe/Paris', createdAt: expect.any(Date) });
      expect(await m.as(asAdminA(), () => sites.update(site.id, { timezone: 'UTC' }))).toMatchObject({ name: 'A3', timezone: 'UTC' });
      expect(await m.as(asAdminA(), () => sites.delete(site.id))).toBe(1);
      expect((await m.owner.query(`SELECT 1 FROM sites WHERE id = $1`, [site.id])).rowCount).toBe(0);
    });

    it('neither renames, deletes nor creates a site of another tenant', async () => {
      expect(await m.as(asAdminA(), () => sites.update(t.siteB1, { name: 'hijacked' }))).toBeNull();
      expect(await m.as(asAdminA(), () => sites.delete(t.siteB1))).toBe(0);
      expect((await m.owner.query(`SELECT name FROM sites WHERE id = $1`, [t.siteB1])).rows).toEqual([{ name: 'B1' }]);
      await expect(m.as(asAdminA(), () => sites.insert({ orgId: t.orgB, name: 'planted', timezone: 'UTC' }))).rejects.toThrow(/row-level security/);
    });
  });

  describe('RoleRepository', () => {
    it('lists partner roles first, then each organization’s roles by name without regard to case', async () => {
      await m.as(asTech(), () => roles.insert({ scope: 'organization', orgId: t.orgA, partnerId: null, name: 'auditor', permissions: ['audit:read'] }));
      const listed = await m.as(asTech(), () => roles.list({}));
      const ofA = listed.filter((r) => r.orgId === t.orgA).map((r) => r.name);
      expect(listed[0]).toMatchObject({ id: t.roleTech, scope: 'partner', partnerId: t.partnerP });
      expect(ofA).toEqual(['Admin', 'auditor', 'Reader']);
      expect((await m.as(asTech(), () => roles.list({ scope: 'partner' }))).map((r) => r.id)).toEqual([t.roleTech]);
      expect((await m.as(asTech(), () => roles.list({ orgId: t.orgA }))).map((r) => r.name)).toEqual(['Admin', 'auditor', 'Reader']);
    });

    it('stores a role’s permissions as a text array and updates them', async () => {
      const role = await m.as(asAdminA(), () => roles.insert({ scope: 'organization', orgId: t.orgA, partnerId: null, name: 'Helpdesk', permissions: ['devices:read', 'devices:execute'] }));
      expect(role).toMatchObject({ scope: 'organization', orgId: t.orgA, permissions: ['devices:read', 'devices:execute'] });
      const changed = await m.as(asAdminA(), () => roles.update(role.id, { permissions: ['devices:read'] }));
      expect(changed).toMatchObject({ name: 'Helpdesk', permissions: ['devices:read'] });
      expect((await m.owner.query(`SELECT permissions FROM roles WHERE id = $1`, [role.id])).rows[0].permissions).toEqual(['devices:read']);
    });

    it('never shows, changes or deletes another tenant’s role, and refuses to create one for it', async () => {
      expect(await m.as(asAdminA(), () => roles.find(t.roleAdminB))).toBeNull();
      expect(await m.as(asAdminA(), () => roles.list({}))).not.toContainEqual(expect.objectContaining({ id: t.roleAdminB }));
      expect(await m.as(asAdminA(), () => roles.update(t.roleAdminB, { permissions: [] }))).toBeNull();
      expect(await m.as(asAdminA(), () => roles.delete(t.roleAdminB))).toBe(0);
      expect((await m.owner.query(`SELECT permissions FROM roles WHERE id = $1`, [t.roleAdminB])).rows[0].permissions).toEqual(['*']);
      await expect(m.as(asAdminA(), () => roles.insert({ scope: 'organization', orgId: t.orgB, partnerId: null, name: 'planted', permissions: ['*'] }))).rejects.toThrow(
        /row-level security/,
      );
    });
  });
});
