import { randomBytes, randomUUID } from 'node:crypto';
import { SYSTEM_SCOPE } from '../../../src/infra/database/tenant-scope';
import { ApprovalRepository } from '../../../src/modules/pam/approvals/approval.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, withdrawPushes, type TenantRows } from '../../support/medium/tenant-rows';

const TTL = 60;

/**
 * Mobile approvals: the fan-out function (who is asked, and on how many phones), the approver's
 * open requests and the compare-and-swap decision.
 */
describe('ApprovalRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: ApprovalRepository;

  const phone = (userId: string) =>
    m.owner.query(`INSERT INTO mobile_devices (id, user_id, platform, push_token, push_token_hmac) VALUES ($1, $2, 'ios', $3, $4)`, [randomUUID(), userId, randomBytes(8).toString('hex'), randomBytes(8).toString('hex')]);
  const approvers = async (requestId: string) =>
    (await m.owner.query<{ approver_user_id: string }>(`SELECT approver_user_id FROM pam_approval_requests WHERE elevation_request_id = $1`, [requestId])).rows.map((r) => r.approver_user_id).sort();
  const pendingIn = (siteId: string, deviceId: string, over: { subjectUserId?: string } = {}) => insertRequest(m.owner, { orgId: t.orgA, siteId, deviceId, ...over });

  beforeAll(async () => {
    m = await startMedium([ApprovalRepository]);
    repo = m.get(ApprovalRepository);
    t = await seedTenants(m.owner);
    // Everyone has a phone (the site member two), so that only roles, sites and subjects decide who is asked.
    for (const user of [t.adminA, t.siteUserA1, t.siteUserA1, t.readerA, t.tech, t.adminB]) await phone(user);
  });
  afterEach(() => withdrawPushes(m.owner, t));
  afterAll(() => m.close());

  describe('fanOut', () => {
    it('asks every active technician who may execute on the request’s site, once per phone, and no one of another tenant', async () => {
      const id = await pendingIn(t.siteA1, t.deviceA1);
      // After the transaction's opening, as in an ingest request (the request is stored first): bound parameters.
      expect(await m.asOpened(SYSTEM_SCOPE, () => repo.fanOut(t.orgA, id, TTL))).toEqual({ approvals: 3, pushes: 4 });
      expect(await approvers(id)).toEqual([t.adminA, t.siteUserA1, t.tech].sort());
    });

    it('leaves out a member restricted to other sites, and the subject of the request', async () => {
      const id = await pendingIn(t.siteA2, t.deviceA2, { subjectUserId: t.tech });
      expect(await m.system(() => repo.fanOut(t.orgA, id, TTL))).toEqual({ approvals: 1, pushes: 1 });
      expect(await approvers(id)).toEqual([t.adminA]);
    });

    it('asks no one twice when run again, and no one for a request that is no longer pending', async () => {
      const id = await pendingIn(t.siteA1, t.deviceA1);
      await m.system(() => repo.fanOut(t.orgA, id, TTL));
      expect(await m.system(() => repo.fanOut(t.orgA, id, TTL))).toEqual({ approvals: 0, pushes: 0 });
      const decided = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'denied' });
      expect(await m.system(() => repo.fanOut(t.orgA, decided, TTL))).toEqual({ approvals: 0, pushes: 0 });
    });

    it('leaves out a suspended membership and a disabled user', async () => {
      const id = await pendingIn(t.siteA1, t.deviceA1);
      await m.owner.query(`UPDATE partner_memberships SET suspended_at = now() WHERE user_id = $1`, [t.tech]);
      await m.owner.query(`UPDATE users SET status = 'disabled' WHERE id = $1`, [t.siteUserA1]);
      try {
        expect(await m.system(() => repo.fanOut(t.orgA, id, TTL))).toEqual({ approvals: 1, pushes: 1 });
        expect(await approvers(id)).toEqual([t.adminA]);
      } finally {
        await m.owner.query(`UPDATE partner_memberships SET suspended_at = NULL WHERE user_id = $1`, [t.tech]);
        await m.owner.query(`UPDATE users SET status = 'active' WHERE id = $1`, [t.siteUserA1]);
      }
    });

    it('writes nothing for another tenant’s request when run under a tenant’s scope', async () => {
      const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 });
      expect(await m.as(orgPrincipal(t.orgA, { userId: t.adminA }), () => repo.fanOut(t.orgB, theirs, TTL))).toEqual({ approvals: 0, pushes: 0 });
      expect(await approvers(theirs)).toEqual([]);
    });

    it('writes nothing when the request id belongs to another organization than the one named, even in system context', async () => {
      // The request is found by its primary key alone (migration 1763701600000); its organization is checked on the row.
      const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1 });
      expect(await m.system(() => repo.fanOut(t.orgA, theirs, TTL))).toEqual({ approvals: 0, pushes: 0 });
      expect(await approvers(theirs)).toEqual([]);
      // Named with its own organization, the same request is fanned out.
      await m.system(() => repo.fanOut(t.orgB, theirs, TTL));
      expect(await approvers(theirs)).toContain(t.adminB);
    });
  });

  describe('pendingFor, find and decide', () => {
    let requestA1: string;
    let requestA2: string;
    const approvalOf = async (requestId: string, userId: string) =>
      (await m.owner.query<{ id: string }>(`SELECT id FROM pam_approval_requests WHERE elevation_request_id = $1 AND approver_user_id = $2`, [requestId, userId])).rows[0].id;

    beforeAll(async () => {
      requestA1 = await pendingIn(t.siteA1, t.deviceA1);
      requestA2 = await pendingIn(t.siteA2, t.deviceA2);
      await m.system(() => repo.fanOut(t.orgA, requestA1, TTL));
      await m.system(() => repo.fanOut(t.orgA, requestA2, TTL));
    });

    it('lists the approver’s open requests with their device, limited to the given sites', async () => {
      const asTech = orgPrincipal(t.orgA, { userId: t.tech });
      const all = await m.as(asTech, () => repo.pendingFor(t.tech, null));
      expect(all.map((a) => a.elevation_request_id)).toEqual(expect.arrayContaining([requestA1, requestA2]));
      expect(all.find((a) => a.elevation_request_id === requestA1)).toMatchObject({ device_hostname: `WS-A1-${t.label}`, request_status: 'pending', lapsed: false });
      const a2Only = await m.as(asTech, () => repo.pendingFor(t.tech, [t.siteA2]));
      expect(a2Only.map((a) => a.elevation_request_id)).toContain(requestA2);
      expect(a2Only.map((a) => a.elevation_request_id)).not.toContain(requestA1);
    });

    it('decides an approval request once, and not after it has lapsed', async () => {
      const id = await approvalOf(requestA1, t.adminA);
      const asAdmin = orgPrincipal(t.orgA, { userId: t.adminA });
      expect(await m.as(asAdmin, () => repo.decide(id, 'approved'))).toBe(true);
      expect(await m.as(asAdmin, () => repo.decide(id, 'denied'))).toBe(false);
      expect(await m.as(asAdmin, () => repo.find(id))).toMatchObject({ status: 'approved' });
      const lapsed = await approvalOf(requestA2, t.adminA);
      await m.owner.query(`UPDATE pam_approval_requests SET expires_at = now() - interval '1 minute' WHERE id = $1`, [lapsed]);
      expect(await m.as(asAdmin, () => repo.decide(lapsed, 'approved'))).toBe(false);
      expect(await m.as(asAdmin, () => repo.find(lapsed))).toMatchObject({ status: 'pending', lapsed: true });
    });

    it('neither shows nor decides an approval request of another tenant', async () => {
      const id = await approvalOf(requestA2, t.tech);
      const asB = orgPrincipal(t.orgB, { userId: t.adminB });
      expect(await m.as(asB, () => repo.find(id))).toBeNull();
      expect(await m.as(asB, () => repo.decide(id, 'denied'))).toBe(false);
      expect(await m.as(asB, () => repo.pendingFor(t.tech, null))).toEqual([]);
      expect((await m.owner.query(`SELECT status FROM pam_approval_requests WHERE id = $1`, [id])).rows[0].status).toBe('pending');
    });
  });
});
