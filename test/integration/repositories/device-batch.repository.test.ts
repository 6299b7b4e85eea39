import { randomUUID } from 'node:crypto';
import { DeviceBatchRepository, type DeviceRecord } from '../../../src/modules/tenancy/devices/device-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Devices as the importer reads and writes them: a whole batch in one statement, in the caller's transaction. */
describe('DeviceBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let devices: DeviceBatchRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const record = (over: Partial<DeviceRecord> & Pick<DeviceRecord, 'org_id' | 'site_id'>): DeviceRecord => ({
    id: randomUUID(),
    hostname: `BATCH-${randomUUID().slice(0, 8)}-${t.label}`,
    os_type: 'windows',
    status: 'active',
    ...over,
  });
  const stored = async (id: string) => (await m.owner.query(`SELECT id, org_id, hostname, os_type, site_id, status FROM devices WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([DeviceBatchRepository]);
    devices = m.get(DeviceBatchRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('ofOrgs', () => {
    it('answers every device of the organizations asked for, by column name', async () => {
      const listed = await m.as(asTech(), () => devices.ofOrgs([t.orgA, t.orgA2]));
      expect(listed.map((d) => d.id).sort()).toEqual([t.deviceA1, t.deviceA2, t.deviceX1].sort());
      expect(listed.find((d) => d.id === t.deviceA1)).toEqual({ id: t.deviceA1, org_id: t.orgA, hostname: `WS-A1-${t.label}`, os_type: null, site_id: t.siteA1, status: 'active' });
    });

    it('answers nothing for no organizations, nothing of another tenant, and only the sites of a site-restricted caller', async () => {
      expect(await m.as(asAdminA(), () => devices.ofOrgs([]))).toEqual([]);
      expect(await m.as(asAdminA(), () => devices.ofOrgs([t.orgB]))).toEqual([]);
      expect((await m.as(asSiteUserA1(), () => devices.ofOrgs([t.orgA]))).map((d) => d.id)).toEqual([t.deviceA1]);
    });
  });

  describe('insertMany', () => {
    it('writes every row of a batch in one statement, os type null included, and nothing for an empty batch', async () => {
      const rows = [record({ org_id: t.orgA, site_id: t.siteA1 }), record({ org_id: t.orgA, site_id: t.siteA2, os_type: null, status: 'decommissioned' })];
      await m.as(asAdminA(), () => devices.insertMany(rows));
      expect(await stored(rows[0].id)).toEqual(rows[0]);
      expect(await stored(rows[1].id)).toEqual(rows[1]);
      await m.as(asAdminA(), () => devices.insertMany([]));
    });

    it('writes none of a batch when one row collides with an existing device', async () => {
      const fresh = record({ org_id: t.orgA, site_id: t.siteA1 });
      await expect(m.as(asAdminA(), () => devices.insertMany([fresh, record({ id: t.deviceA1, org_id: t.orgA, site_id: t.siteA1 })]))).rejects.toThrow(/duplicate key/);
      expect(await stored(fresh.id)).toBeUndefined();
    });

    it('refuses a batch with a row of another tenant or of a site the caller does not reach', async () => {
      const planted = record({ org_id: t.orgB, site_id: t.siteB1 });
      await expect(m.as(asAdminA(), () => devices.insertMany([record({ org_id: t.orgA, site_id: t.siteA1 }), planted]))).rejects.toThrow(/row-level security/);
      const elsewhere = record({ org_id: t.orgA, site_id: t.siteA2 });
      await expect(m.as(asSiteUserA1(), () => devices.insertMany([elsewhere]))).rejects.toThrow(/row-level security/);
      expect(await stored(planted.id)).toBeUndefined();
      expect(await stored(elsewhere.id)).toBeUndefined();
    });
  });

  describe('updateMany', () => {
    it('changes site, hostname, os type and status of every row matched by organization and id', async () => {
      const [a, b] = [record({ org_id: t.orgA, site_id: t.siteA1 }), record({ org_id: t.orgA, site_id: t.siteA1 })];
      await m.as(asAdminA(), () => devices.insertMany([a, b]));
      const changed = [
        { ...a, site_id: t.siteA2, hostname: `moved-${t.label}`, os_type: null, status: 'decommissioned' },
        { ...b, os_type: 'linux' },
      ];
      await m.as(asAdminA(), () => devices.updateMany(changed));
      expect(await stored(a.id)).toEqual(changed[0]);
      expect(await stored(b.id)).toEqual(changed[1]);
      await m.as(asAdminA(), () => devices.updateMany([]));
    });

    it('leaves a device alone when the row names it under another organization', async () => {
      await m.as(asTech(), () => devices.updateMany([record({ id: t.deviceA1, org_id: t.orgA2, site_id: t.siteX1, hostname: 'misfiled' })]));
      expect((await stored(t.deviceA1)).hostname).toBe(`WS-A1-${t.label}`);
    });

    it('changes nothing of another tenant’s device, nor of a site the caller does not reach', async () => {
      await m.as(asAdminA(), () => devices.updateMany([record({ id: t.deviceB1, org_id: t.orgB, site_id: t.siteB1, hostname: 'hijacked' })]));
      expect((await stored(t.deviceB1)).hostname).toBe(`WS-B1-${t.label}`);
      await m.as(asSiteUserA1(), () => devices.updateMany([record({ id: t.deviceA2, org_id: t.orgA, site_id: t.siteA2, hostname: 'hijacked' })]));
      expect((await stored(t.deviceA2)).hostname).toBe(`WS-A2-${t.label}`);
      await expect(
        m.as(asSiteUserA1(), () => devices.updateMany([record({ id: t.deviceA1, org_id: t.orgA, site_id: t.siteA2, hostname: `WS-A1-${t.label}`, os_type: null })])),
      ).rejects.toThrow(/row-level security/);
      expect((await stored(t.deviceA1)).site_id).toBe(t.siteA1);
    });
  });
});
