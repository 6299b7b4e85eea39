import { randomUUID } from 'node:crypto';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { AgentEntity } from '../../../src/modules/tenancy/devices/agent.entity';
import { DeviceEntity } from '../../../src/modules/tenancy/devices/device.entity';
import { DeviceRepository } from '../../../src/modules/tenancy/devices/device.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Devices and their agents' enrolment. Organization A2nd gets three more devices whose order by
 * byte differs from their order without regard to case, and a revoked agent on one of them.
 */
describe('DeviceRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let devices: DeviceRepository;
  let alpha: string;
  let zeta: string;
  let retired: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminA2 = () => orgPrincipal(t.orgA2);
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const page = (limit = 50, offset = 0) => ({ limit, offset });

  beforeAll(async () => {
    m = await startMedium([DeviceRepository], {}, { entities: [DeviceEntity, AgentEntity] });
    devices = m.get(DeviceRepository);
    t = await seedTenants(m.owner);
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO devices (org_id, site_id, hostname, status) VALUES ($1, $2, 'alpha-' || $3, 'active'), ($1, $2, 'Zeta-' || $3, 'active'), ($1, $2, 'old_100%', 'decommissioned')
       RETURNING id`,
      [t.orgA2, t.siteX1, t.label],
    );
    [alpha, zeta, retired] = rows.map((r) => r.id);
    await m.owner.query(`INSERT INTO agents (id, org_id, device_id, token_hash, revoked_at) VALUES ($1, $2, $3, $4, now())`, [randomUUID(), t.orgA2, alpha, tokenHash(`gone-${t.label}`)]);
  });
  afterAll(() => m.close());

  describe('list', () => {
    it('pages an organization’s devices by hostname without regard to case, with the total of the filter', async () => {
      const all = await m.as(asAdminA2(), () => devices.list({ orgId: t.orgA2, siteIds: null }, page()));
      expect(all.rows.map((d) => d.id)).toEqual([alpha, retired, t.deviceX1, zeta]);
      expect(all.total).toBe(4);
      const second = await m.as(asAdminA2(), () => devices.list({ orgId: t.orgA2, siteIds: null }, page(2, 1)));
      expect(second).toEqual({ rows: [expect.objectContaining({ id: retired }), expect.objectContaining({ id: t.deviceX1 })], total: 4 });
    });

    it('reports the total on a page past the end, and zero for a filter nothing matches', async () => {
      expect(await m.as(asAdminA2(), () => devices.list({ orgId: t.orgA2, siteIds: null }, page(10, 40)))).toEqual({ rows: [], total: 4 });
      expect(await m.as(asAdminA2(), () => devices.list({ orgId: t.orgA2, siteIds: null }, page(10, Number.MAX_VALUE)))).toEqual({ rows: [], total: 4 });
      expect(await m.as(asAdminA2(), () => devices.list({ orgId: t.orgA2, search: 'nothing-like-it', siteIds: null }, page()))).toEqual({ rows: [], total: 0 });
    });

    it('filters on status, site and a hostname fragment taken literally', async () => {
      const ids = async (f: Parameters<DeviceRepository['list']>[0]) => (await m.as(asAdminA2(), () => devices.list(f, page()))).rows.map((d) => d.id);
      expect(await ids({ status: 'decommissioned', siteIds: null })).toEqual([retired]);
      expect(await ids({ siteId: t.siteX1, status: 'active', siteIds: null })).toEqual([alpha, t.deviceX1, zeta]);
      expect(await ids({ search: 'ZETA', siteIds: null })).toEqual([zeta]);
      expect(await ids({ search: '_100%', siteIds: null })).toEqual([retired]);
      expect(await ids({ search: '%', siteIds: null })).toEqual([retired]);
      expect(await ids({ search: 'o_d', siteIds: null })).toEqual([]);
    });

    it('joins each device’s live agent only, never a revoked one, and answers null for a device without one', async () => {
      const { rows } = await m.as(asAdminA(), () => devices.list({ orgId: t.orgA, siteIds: null }, page()));
      expect(rows.map((d) => [d.id, d.agent?.id])).toEqual([
        [t.deviceA1, t.agentA1.id],
        [t.deviceA2, t.agentA2.id],
      ]);
      expect(rows[0].agent!.tokenHash).toBeUndefined();
      const withRevoked = await m.as(asAdminA2(), () => devices.find(alpha));
      expect(withRevoked).toMatchObject({ id: alpha, hostname: `alpha-${t.label}` });
      const none: AgentEntity | null = withRevoked!.agent;
      expect(none).toBeNull();
      const listed = (await m.as(asAdminA2(), () => devices.list({ search: `alpha-${t.label}`, siteIds: null }, page()))).rows;
      expect(listed.map((d) => [d.id, d.agent])).toEqual([[alpha, null]]);
    });

    it('limits the list to the given sites, and a site-restricted caller to its sites whatever it asks', async () => {
      expect((await m.as(asAdminA(), () => devices.list({ siteIds: [t.siteA2] }, page()))).rows.map((d) => d.id)).toEqual([t.deviceA2]);
      expect(await m.as(asSiteUserA1(), () => devices.list({ orgId: t.orgA, siteIds: null }, page()))).toEqual({ rows: [expect.objectContaining({ id: t.deviceA1 })], total: 1 });
      expect(await m.as(asSiteUserA1(), () => devices.list({ siteId: t.siteA2, siteIds: null }, page()))).toEqual({ rows: [], total: 0 });
    });

    it('shows nothing of another tenant’s devices', async () => {
      expect(await m.as(asAdminA(), () => devices.list({ orgId: t.orgB, siteIds: null }, page()))).toEqual({ rows: [], total: 0 });
      expect((await m.as(asAdminA(), () => devices.list({ siteIds: null }, page()))).rows.map((d) => d.orgId)).toEqual([t.orgA, t.orgA]);
      expect(await m.as(asAdminA(), () => devices.find(t.deviceB1))).toBeNull();
      expect(await m.as(asAdminA(), () => devices.lock(t.deviceB1))).toBeNull();
    });
  });

  describe('writes', () => {
    it('creates a device with the default status, changes it, and clears its OS type with null', async () => {
      const created = await m.as(asAdminA(), () => devices.insert({ orgId: t.orgA, siteId: t.siteA2, hostname: `NEW-${t.label}`, osType: 'windows' }));
      expect(created).toMatchObject({ id: expect.any(String), createdAt: expect.any(Date) });
      expect(await m.as(asAdminA(), () => devices.find(created.id))).toMatchObject({ status: 'active', osType: 'windows', siteId: t.siteA2 });
      expect(await m.as(asAdminA(), () => devices.update(created.id, { siteId: t.siteA1, status: 'decommissioned', osType: null }))).toBe(1);
      expect(await m.as(asAdminA(), () => devices.lock(created.id))).toEqual({ id: created.id, orgId: t.orgA, siteId: t.siteA1, status: 'decommissioned' });
      const stored = (await m.owner.query(`SELECT hostname, os_type, status FROM devices WHERE id = $1`, [created.id])).rows[0];
      expect(stored).toEqual({ hostname: `NEW-${t.label}`, os_type: null, status: 'decommissioned' });
    });

    it('neither changes nor creates another tenant’s device', async () => {
      expect(await m.as(asAdminA(), () => devices.update(t.deviceB1, { hostname: 'hijacked' }))).toBe(0);
      expect((await m.owner.query(`SELECT hostname FROM devices WHERE id = $1`, [t.deviceB1])).rows[0].hostname).toBe(`WS-B1-${t.label}`);
      await expect(m.as(asAdminA(), () => devices.insert({ orgId: t.orgB, siteId: t.siteB1, hostname: 'planted', osType: null }))).rejects.toThrow(/row-level security/);
    });

    it('lets a site-restricted caller write devices of its sites only', async () => {
      expect(await m.as(asSiteUserA1(), () => devices.update(t.deviceA2, { hostname: 'hijacked' }))).toBe(0);
      expect((await m.owner.query(`SELECT hostname FROM devices WHERE id = $1`, [t.deviceA2])).rows[0].hostname).toBe(`WS-A2-${t.label}`);
      await expect(m.as(asSiteUserA1(), () => devices.insert({ orgId: t.orgA, siteId: t.siteA2, hostname: 'planted', osType: null }))).rejects.toThrow(/row-level security/);
      await expect(m.as(asSiteUserA1(), () => devices.update(t.deviceA1, { siteId: t.siteA2 }))).rejects.toThrow(/row-level security/);
      expect(await m.tryAs(asSiteUserA1(), () => devices.update(t.deviceA1, { osType: 'linux' }))).toBe(1);
    });
  });

  describe('agent enrolment', () => {
    it('enrols an agent, revokes it, and enrols the next one', async () => {
      const device = await m.as(asAdminA2(), () => devices.insert({ orgId: t.orgA2, siteId: t.siteX1, hostname: `ENROL-${t.label}`, osType: null }));
      const first = randomUUID();
      await m.as(asAdminA2(), () => devices.insertAgent({ id: first, orgId: t.orgA2, deviceId: device.id, tokenHash: tokenHash(`first-${t.label}`) }));
      expect((await m.as(asAdminA2(), () => devices.find(device.id)))!.agent).toMatchObject({ id: first, revokedAt: null });
      expect((await m.owner.query(`SELECT token_hash FROM agents WHERE id = $1`, [first])).rows[0].token_hash).toBe(tokenHash(`first-${t.label}`));
      const second = randomUUID();
      await expect(m.as(asAdminA2(), () => devices.insertAgent({ id: second, orgId: t.orgA2, deviceId: device.id, tokenHash: tokenHash(`second-${t.label}`) }))).rejects.toThrow(
        /duplicate key/,
      );
      expect(await m.as(asAdminA2(), () => devices.revokeAgents(t.orgA2, device.id))).toBe(1);
      expect(await m.as(asAdminA2(), () => devices.revokeAgents(t.orgA2, device.id))).toBe(0);
      expect((await m.as(asAdminA2(), () => devices.find(device.id)))!.agent ?? null).toBeNull();
      await m.as(asAdminA2(), () => devices.insertAgent({ id: second, orgId: t.orgA2, deviceId: device.id, tokenHash: tokenHash(`second-${t.label}`) }));
      expect((await m.as(asAdminA2(), () => devices.find(device.id)))!.agent).toMatchObject({ id: second });
    });

    it('neither revokes nor enrols an agent of another tenant', async () => {
      expect(await m.as(asAdminA(), () => devices.revokeAgents(t.orgB, t.deviceB1))).toBe(0);
      expect((await m.owner.query(`SELECT revoked_at FROM agents WHERE id = $1`, [t.agentB1.id])).rows[0].revoked_at).toBeNull();
      await expect(m.as(asAdminA(), () => devices.insertAgent({ id: randomUUID(), orgId: t.orgB, deviceId: t.deviceB1, tokenHash: tokenHash('planted') }))).rejects.toThrow(
        /row-level security/,
      );
    });
  });
});
