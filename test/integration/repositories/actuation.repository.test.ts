import { randomUUID } from 'node:crypto';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { ActuationRepository } from '../../../src/modules/pam/actuation/actuation.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** The device an actuation names, and the command that asks its agent to elevate. */
describe('ActuationRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: ActuationRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const actuating = (orgId: string, siteId: string, deviceId: string) => insertRequest(m.owner, { orgId, siteId, deviceId, status: 'actuating' });
  const commandsOf = async (requestId: string) =>
    (await m.owner.query(`SELECT org_id, device_id, type, payload, status, elevation_request_id FROM device_commands WHERE elevation_request_id = $1`, [requestId])).rows;

  beforeAll(async () => {
    m = await startMedium([ActuationRepository]);
    repo = m.get(ActuationRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('device', () => {
    it('reads a device of the caller’s organization with its site and status', async () => {
      expect(await m.as(asAdminA(), () => repo.device(t.deviceA2))).toEqual({ id: t.deviceA2, org_id: t.orgA, site_id: t.siteA2, status: 'active' });
      expect(await m.as(asAdminA(), () => repo.device(randomUUID()))).toBeNull();
    });

    it('reads a device of another site for a site-restricted caller only when its sites are widened, as the service does to answer 403', async () => {
      expect(await m.as(asSiteUserA1(), () => repo.device(t.deviceA2))).toBeNull();
      const tx = m.get(TenantTransactionService);
      expect(await m.as(asSiteUserA1(), () => tx.withAllSites('medium test', () => repo.device(t.deviceA2)))).toMatchObject({ id: t.deviceA2, site_id: t.siteA2 });
    });

    it('shows nothing of another tenant’s device', async () => {
      expect(await m.as(asAdminB(), () => repo.device(t.deviceA1))).toBeNull();
      const tx = m.get(TenantTransactionService);
      expect(await m.as(asAdminB(), () => tx.withAllSites('medium test', () => repo.device(t.deviceA1)))).toBeNull();
    });
  });

  describe('queueActuation', () => {
    it('queues one command carrying the request id and the timeout only', async () => {
      const request = await actuating(t.orgA, t.siteA1, t.deviceA1);
      const id = await m.as(asAdminA(), () => repo.queueActuation(t.orgA, t.deviceA1, request, 30000));
      expect(id).toEqual(expect.any(String));
      expect(await commandsOf(request)).toEqual([
        { org_id: t.orgA, device_id: t.deviceA1, type: 'actuate_elevation', payload: { elevationRequestId: request, timeoutMs: 30000 }, status: 'queued', elevation_request_id: request },
      ]);
    });

    it('refuses a second live actuation of the same request, and queues one again once the first is done', async () => {
      const request = await actuating(t.orgA, t.siteA1, t.deviceA1);
      const first = await m.as(asAdminA(), () => repo.queueActuation(t.orgA, t.deviceA1, request, 1000));
      await expect(m.as(asAdminA(), () => repo.queueActuation(t.orgA, t.deviceA1, request, 1000))).rejects.toThrow(/duplicate key/);
      await m.owner.query(`UPDATE device_commands SET status = 'failed', completed_at = now() WHERE id = $1`, [first]);
      const second = await m.as(asAdminA(), () => repo.queueActuation(t.orgA, t.deviceA1, request, 1000));
      expect(second).not.toBe(first);
      expect((await commandsOf(request)).map((c) => c.status).sort()).toEqual(['failed', 'queued']);
    });

    it('refuses a command for a device or request of another organization than the one named', async () => {
      const request = await actuating(t.orgA, t.siteA1, t.deviceA1);
      await expect(m.as(asAdminA(), () => repo.queueActuation(t.orgA, t.deviceX1, request, 1000))).rejects.toThrow(/foreign key/);
      const elsewhere = await actuating(t.orgA2, t.siteX1, t.deviceX1);
      await expect(m.as(asAdminA(), () => repo.queueActuation(t.orgA, t.deviceA1, elsewhere, 1000))).rejects.toThrow(/foreign key/);
      expect(await commandsOf(request)).toEqual([]);
    });

    it('queues nothing in another tenant’s organization', async () => {
      const theirs = await actuating(t.orgB, t.siteB1, t.deviceB1);
      await expect(m.as(asAdminA(), () => repo.queueActuation(t.orgB, t.deviceB1, theirs, 1000))).rejects.toThrow(/row-level security/);
      expect(await commandsOf(theirs)).toEqual([]);
    });
  });
});
