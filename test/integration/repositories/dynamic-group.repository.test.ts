import { randomUUID } from 'node:crypto';
import { DynamicGroupRepository } from '../../../src/modules/policies/dynamic-groups/dynamic-group.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The policies module's reads of dynamic device groups. Organization A gets three dynamic groups
 * (one bound to site A1, one to A2, one organization-wide over every device of A), a static group
 * that no read here answers, and two more devices whose hostnames sort differently by case.
 */
describe('DynamicGroupRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let groups: DynamicGroupRepository;
  let everything: string;
  let onA1: string;
  let onA2: string;
  let staticA: string;
  let ofB: string;
  let alpha: string;
  let zulu: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const dynamic = async (orgId: string, siteId: string | null, name: string, filter: object) =>
    (await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, site_id, name, kind, filter) VALUES ($1, $2, $3, 'dynamic', $4) RETURNING id`, [orgId, siteId, name, filter])).rows[0]
      .id;
  const all = { all: [] };

  beforeAll(async () => {
    m = await startMedium([DynamicGroupRepository]);
    groups = m.get(DynamicGroupRepository);
    t = await seedTenants(m.owner);
    const { rows } = await m.owner.query<{ id: string }>(
      `INSERT INTO devices (org_id, site_id, hostname) VALUES ($1, $2, 'alpha-' || $3), ($1, $2, 'Zulu-' || $3) RETURNING id`,
      [t.orgA, t.siteA1, t.label],
    );
    [alpha, zulu] = rows.map((r) => r.id);
    everything = await dynamic(t.orgA, null, 'Everything', all);
    onA1 = await dynamic(t.orgA, t.siteA1, 'a1 hosts', all);
    onA2 = await dynamic(t.orgA, t.siteA2, 'A2 hosts', all);
    staticA = (await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name) VALUES ($1, 'static') RETURNING id`, [t.orgA])).rows[0].id;
    ofB = await dynamic(t.orgB, null, 'b everything', all);
  });
  afterAll(() => m.close());

  describe('list and find', () => {
    it('lists an organization’s dynamic groups by name without regard to case, each with its member count', async () => {
      const listed = await m.as(asAdminA(), () => groups.list(t.orgA, null));
      expect(listed.map((g) => [g.id, g.name, g.member_count])).toEqual([
        [onA1, 'a1 hosts', '3'],
        [onA2, 'A2 hosts', '1'],
        [everything, 'Everything', '4'],
      ]);
      expect(listed[0]).toEqual({ id: onA1, org_id: t.orgA, site_id: t.siteA1, name: 'a1 hosts', filter: all, member_count: '3', created_at: expect.any(Date), updated_at: expect.any(Date) });
    });

    it('lists only the groups bound to the given sites, and every organization’s groups when none is named', async () => {
      expect((await m.as(asAdminA(), () => groups.list(t.orgA, [t.siteA2]))).map((g) => g.id)).toEqual([onA2]);
      expect(await m.as(asAdminA(), () => groups.list(t.orgA, []))).toEqual([]);
      const orgA2Group = await dynamic(t.orgA2, null, 'x everything', all);
      const byTech = await m.as(asTech(), () => groups.list(undefined, null));
      expect(byTech.map((g) => g.org_id)).toEqual([t.orgA, t.orgA, t.orgA, t.orgA2].sort());
      expect(byTech.map((g) => g.id)).toContain(orgA2Group);
    });

    it('finds a dynamic group by id, never a static one, and counts only members the caller sees', async () => {
      expect(await m.as(asAdminA(), () => groups.find(everything))).toMatchObject({ id: everything, member_count: '4' });
      expect(await m.as(asAdminA(), () => groups.find(staticA))).toBeNull();
      expect(await m.as(asAdminA(), () => groups.find(randomUUID()))).toBeNull();
      expect(await m.as(asSiteUserA1(), () => groups.find(onA1))).toMatchObject({ id: onA1, member_count: '3' });
      expect(await m.as(asSiteUserA1(), () => groups.find(everything))).toBeNull();
    });

    it('shows nothing of another tenant’s groups', async () => {
      expect(await m.as(asAdminA(), () => groups.list(t.orgB, null))).toEqual([]);
      expect((await m.as(asAdminA(), () => groups.list(undefined, null))).map((g) => g.org_id)).toEqual([t.orgA, t.orgA, t.orgA]);
      expect(await m.as(asAdminA(), () => groups.find(ofB))).toBeNull();
    });
  });

  describe('members', () => {
    it('pages a group’s members by hostname without regard to case, with the total', async () => {
      const first = await m.as(asAdminA(), () => groups.members(t.orgA, everything, null, 2, 0));
      expect(first).toEqual({
        rows: [
          { device_id: alpha, hostname: `alpha-${t.label}`, site_id: t.siteA1 },
          { device_id: t.deviceA1, hostname: `WS-A1-${t.label}`, site_id: t.siteA1 },
        ],
        total: 4,
      });
      const second = await m.as(asAdminA(), () => groups.members(t.orgA, everything, null, 2, 2));
      expect(second).toEqual({ rows: [expect.objectContaining({ device_id: t.deviceA2 }), expect.objectContaining({ device_id: zulu })], total: 4 });
    });

    it('reports the total on a page past the end, and zero for a group without members', async () => {
      expect(await m.as(asAdminA(), () => groups.members(t.orgA, everything, null, 10, 40))).toEqual({ rows: [], total: 4 });
      const none = await dynamic(t.orgA, null, 'nobody', { field: 'hostname', op: 'eq', value: 'no-such-host' });
      expect(await m.as(asAdminA(), () => groups.members(t.orgA, none, null, 10, 0))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminA(), () => groups.members(t.orgA, none, null, 10, 10))).toEqual({ rows: [], total: 0 });
    });

    it('keeps members to the given sites, and to a site-restricted caller’s sites', async () => {
      expect((await m.as(asAdminA(), () => groups.members(t.orgA, everything, [t.siteA2], 10, 0))).rows.map((r) => r.device_id)).toEqual([t.deviceA2]);
      expect(await m.as(asSiteUserA1(), () => groups.members(t.orgA, everything, null, 10, 0))).toMatchObject({ total: 3 });
      expect(await m.as(asSiteUserA1(), () => groups.members(t.orgA, everything, null, 10, 5))).toEqual({ rows: [], total: 3 });
    });

    it('shows no member of another tenant’s group', async () => {
      expect(await m.as(asAdminA(), () => groups.members(t.orgB, ofB, null, 10, 0))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminA(), () => groups.members(t.orgB, ofB, null, 10, 10))).toEqual({ rows: [], total: 0 });
    });
  });

  describe('lookups', () => {
    it('answers the custom fields that apply to the organization: its own and its partner’s', async () => {
      const insert = async (orgId: string | null, partnerId: string | null, key: string, type = 'text', options: string[] = []) =>
        (
          await m.owner.query<{ id: string }>(`INSERT INTO custom_field_definitions (org_id, partner_id, key, name, type, options) VALUES ($1, $2, $3, $3, $4, $5) RETURNING id`, [
            orgId,
            partnerId,
            key,
            type,
            JSON.stringify(options),
          ])
        ).rows[0].id;
      const own = await insert(t.orgA, null, 'owner', 'single_select', ['alice', 'bob']);
      const partners = await insert(null, t.partnerP, 'tier');
      const sibling = await insert(t.orgA2, null, 'sibling');
      const otherPartner = await insert(null, t.partnerQ, 'foreign');
      const found = await m.as(asTech(), () => groups.definitionsFor(t.orgA, [own, partners, sibling, otherPartner, randomUUID()]));
      expect(found.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        [
          { id: own, type: 'single_select', options: ['alice', 'bob'] },
          { id: partners, type: 'text', options: [] },
        ].sort((a, b) => a.id.localeCompare(b.id)),
      );
      expect(await m.as(asAdminA(), () => groups.definitionsFor(t.orgA, []))).toEqual([]);
      expect(await m.as(asAdminA(), () => groups.definitionsFor(t.orgB, [otherPartner]))).toEqual([]);
    });

    it('answers the organization of a site the caller sees, and null otherwise', async () => {
      expect(await m.as(asAdminA(), () => groups.siteOrg(t.siteA2))).toEqual({ org_id: t.orgA });
      expect(await m.as(asAdminA(), () => groups.siteOrg(t.siteB1))).toBeNull();
      expect(await m.as(asAdminA(), () => groups.siteOrg(randomUUID()))).toBeNull();
    });

    it('counts the policy assignments of a group that the caller sees', async () => {
      expect(await m.as(asAdminA(), () => groups.assignmentCount(everything))).toBe(0);
      const policy = (await m.owner.query<{ id: string }>(`INSERT INTO policies (org_id, type, name) VALUES ($1, 'configuration', 'p') RETURNING id`, [t.orgA])).rows[0].id;
      const policyB = (await m.owner.query<{ id: string }>(`INSERT INTO policies (org_id, type, name) VALUES ($1, 'configuration', 'p') RETURNING id`, [t.orgB])).rows[0].id;
      await m.owner.query(`INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, device_group_id) VALUES ($1, $2, $3, 'device_group', $4)`, [
        t.partnerP,
        t.orgA,
        policy,
        everything,
      ]);
      await m.owner.query(`INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, device_group_id) VALUES ($1, $2, $3, 'device_group', $4)`, [
        t.partnerQ,
        t.orgB,
        policyB,
        ofB,
      ]);
      expect(await m.as(asAdminA(), () => groups.assignmentCount(everything))).toBe(1);
      expect(await m.as(asAdminA(), () => groups.assignmentCount(ofB))).toBe(0);
      expect(await m.system(() => groups.assignmentCount(ofB))).toBe(1);
    });
  });
});
