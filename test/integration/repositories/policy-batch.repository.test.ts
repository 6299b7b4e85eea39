import { randomUUID } from 'node:crypto';
import { PolicyBatchRepository, type AssignmentRecord, type PolicyRecord } from '../../../src/modules/policies/policy-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Policies and assignments as the importer compares and writes them. Partner P has a policy of its
 * own, A and A2nd one each, and B one that no caller of P may see or change.
 */
describe('PolicyBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let batch: PolicyBatchRepository;
  let ofP: PolicyRecord;
  let ofA: PolicyRecord;
  let ofA2: PolicyRecord;
  let ofB: PolicyRecord;
  let groupA: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const policy = (over: Partial<PolicyRecord>): PolicyRecord => ({
    id: randomUUID(),
    partner_id: null,
    org_id: null,
    type: 'configuration',
    name: `policy ${randomUUID().slice(0, 8)}`,
    description: null,
    enabled: true,
    features: {},
    ...over,
  });
  const assignment = (policyId: string, over: Partial<AssignmentRecord>): AssignmentRecord => ({
    partner_id: t.partnerP,
    org_id: t.orgA,
    policy_id: policyId,
    target_level: 'organization',
    site_id: null,
    device_group_id: null,
    device_id: null,
    priority: 100,
    ...over,
  });
  const storedPolicy = async (id: string) =>
    (await m.owner.query(`SELECT id, partner_id, org_id, type, name, description, enabled, features FROM policies WHERE id = $1`, [id])).rows[0] as PolicyRecord | undefined;
  const priorities = async (policyId: string) =>
    (await m.owner.query(`SELECT target_level, priority FROM policy_assignments WHERE policy_id = $1 ORDER BY target_level`, [policyId])).rows;

  beforeAll(async () => {
    m = await startMedium([PolicyBatchRepository]);
    batch = m.get(PolicyBatchRepository);
    t = await seedTenants(m.owner);
    ofP = policy({ partner_id: t.partnerP, name: 'baseline', features: { patching: { day: 'tue' } } });
    ofA = policy({ org_id: t.orgA, name: 'a only', description: 'for A' });
    ofA2 = policy({ org_id: t.orgA2, name: 'a2 only', type: 'patch' });
    ofB = policy({ org_id: t.orgB, name: 'b only' });
    for (const p of [ofP, ofA, ofA2, ofB]) {
      await m.owner.query(`INSERT INTO policies (id, partner_id, org_id, type, name, description, enabled, features) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
        p.id,
        p.partner_id,
        p.org_id,
        p.type,
        p.name,
        p.description,
        p.enabled,
        p.features,
      ]);
    }
    groupA = (await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name) VALUES ($1, 'servers') RETURNING id`, [t.orgA])).rows[0].id;
  });
  afterAll(() => m.close());

  describe('ofOwners', () => {
    it('answers the partner’s own policies and those of the organizations asked for', async () => {
      const ids = async (orgIds: string[]) => (await m.as(asTech(), () => batch.ofOwners(t.partnerP, orgIds))).map((p) => p.id).sort();
      expect(await ids([t.orgA])).toEqual([ofP.id, ofA.id].sort());
      expect(await ids([t.orgA, t.orgA2])).toEqual([ofP.id, ofA.id, ofA2.id].sort());
      expect(await ids([])).toEqual([ofP.id]);
      expect((await m.as(asTech(), () => batch.ofOwners(t.partnerP, [t.orgA]))).find((p) => p.id === ofP.id)).toEqual(ofP);
    });

    it('answers nothing of another partner or its organizations', async () => {
      expect(await m.as(asTech(), () => batch.ofOwners(t.partnerQ, [t.orgB]))).toEqual([]);
      expect((await m.as(asAdminA(), () => batch.ofOwners(t.partnerP, [t.orgA, t.orgA2, t.orgB]))).map((p) => p.id).sort()).toEqual([ofP.id, ofA.id].sort());
    });
  });

  describe('save', () => {
    it('inserts a policy, and updates it only under the same id, owner and type', async () => {
      const p = policy({ org_id: t.orgA, features: { antivirus: { enabled: true } } });
      await m.as(asAdminA(), () => batch.save(p, true));
      expect(await storedPolicy(p.id)).toEqual(p);
      const changed = { ...p, name: `renamed ${t.label}`, description: 'now described', enabled: false, features: { antivirus: { enabled: false } } };
      await m.as(asAdminA(), () => batch.save(changed, false));
      expect(await storedPolicy(p.id)).toEqual(changed);
      await m.as(asAdminA(), () => batch.save({ ...changed, type: 'patch', name: 'other type' }, false));
      await m.as(asTech(), () => batch.save({ ...changed, org_id: t.orgA2, name: 'other owner' }, false));
      expect(await storedPolicy(p.id)).toEqual(changed);
    });

    it('refuses a second policy of the same name and type for one owner, whatever the case', async () => {
      await expect(m.as(asAdminA(), () => batch.save(policy({ org_id: t.orgA, name: 'A ONLY' }), true))).rejects.toThrow(/duplicate key/);
      const samePatch = policy({ org_id: t.orgA, name: 'a only', type: 'patch' });
      await m.as(asAdminA(), () => batch.save(samePatch, true));
      expect(await storedPolicy(samePatch.id)).toEqual(samePatch);
    });

    it('keeps partner policies to partner-wide callers', async () => {
      const p = policy({ partner_id: t.partnerP });
      await expect(m.as(asTech(false), () => batch.save(p, true))).rejects.toThrow(/partner_wide_write_denied/);
      await expect(m.as(asTech(false), () => batch.save({ ...ofP, name: 'narrowed' }, false))).rejects.toThrow(/partner_wide_write_denied/);
      await m.as(asTech(), () => batch.save(p, true));
      expect(await storedPolicy(p.id)).toEqual(p);
    });

    it('neither creates nor changes a policy of another tenant', async () => {
      const planted = policy({ org_id: t.orgB });
      await expect(m.as(asAdminA(), () => batch.save(planted, true))).rejects.toThrow(/row-level security/);
      await expect(m.as(asTech(), () => batch.save(policy({ partner_id: t.partnerQ }), true))).rejects.toThrow(/row-level security/);
      await m.as(asAdminA(), () => batch.save({ ...ofB, name: 'hijacked' }, false));
      await m.as(asAdminA(), () => batch.save({ ...ofP, name: 'hijacked' }, false));
      expect(await storedPolicy(ofB.id)).toEqual(ofB);
      expect(await storedPolicy(ofP.id)).toEqual(ofP);
      expect(await storedPolicy(planted.id)).toBeUndefined();
    });
  });

  describe('assignments', () => {
    it('writes a batch of assignments at every level and answers each with its target', async () => {
      const p = policy({ partner_id: t.partnerP });
      await m.as(asTech(), () => batch.save(p, true));
      await m.as(asTech(), () =>
        batch.insertAssignments([
          assignment(p.id, { org_id: null, target_level: 'partner', priority: 10 }),
          assignment(p.id, { target_level: 'organization', priority: 20 }),
          assignment(p.id, { target_level: 'site', site_id: t.siteA1, priority: 30 }),
          assignment(p.id, { target_level: 'device_group', device_group_id: groupA, priority: 40 }),
          assignment(p.id, { target_level: 'device', device_id: t.deviceA2, priority: 50 }),
        ]),
      );
      const listed = await m.as(asTech(), () => batch.assignments([p.id]));
      expect(listed.map((a) => [a.target_level, a.target_id, a.priority]).sort()).toEqual(
        [
          ['device', t.deviceA2, 50],
          ['device_group', groupA, 40],
          ['organization', t.orgA, 20],
          ['partner', t.partnerP, 10],
          ['site', t.siteA1, 30],
        ].sort(),
      );
      expect(listed.every((a) => a.policy_id === p.id && typeof a.id === 'string')).toBe(true);
    });

    it('answers nothing for no policies, and writes nothing for an empty batch', async () => {
      expect(await m.as(asTech(), () => batch.assignments([]))).toEqual([]);
      await m.as(asTech(), () => batch.insertAssignments([]));
      await m.as(asTech(), () => batch.updatePriorities([]));
      expect(await m.as(asTech(), () => batch.assignments([ofA.id]))).toEqual([]);
    });

    it('writes none of a batch in which one target is assigned twice', async () => {
      await expect(
        m.as(asAdminA(), () => batch.insertAssignments([assignment(ofA.id, { target_level: 'site', site_id: t.siteA2 }), assignment(ofA.id, { target_level: 'site', site_id: t.siteA2 })])),
      ).rejects.toThrow(/duplicate key/);
      expect(await priorities(ofA.id)).toEqual([]);
    });

    it('changes the priorities of the given assignments, and refuses one out of range', async () => {
      await m.as(asAdminA(), () => batch.insertAssignments([assignment(ofA.id, { target_level: 'site', site_id: t.siteA1 }), assignment(ofA.id, { target_level: 'device', device_id: t.deviceA1 })]));
      const [device, site] = (await m.as(asAdminA(), () => batch.assignments([ofA.id]))).sort((a, b) => a.target_level.localeCompare(b.target_level));
      await m.as(asAdminA(), () => batch.updatePriorities([{ id: device.id, priority: 5 }, { id: site.id, priority: 7 }]));
      expect(await priorities(ofA.id)).toEqual([
        { target_level: 'device', priority: 5 },
        { target_level: 'site', priority: 7 },
      ]);
      await expect(m.as(asAdminA(), () => batch.updatePriorities([{ id: site.id, priority: 10_001 }]))).rejects.toThrow(/check constraint/);
      expect(await priorities(ofA.id)).toEqual([
        { target_level: 'device', priority: 5 },
        { target_level: 'site', priority: 7 },
      ]);
    });

    it('neither shows, writes nor reorders assignments of another tenant', async () => {
      await m.owner.query(`INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, priority) VALUES ($1, $2, $3, 'organization', 100)`, [t.partnerQ, t.orgB, ofB.id]);
      expect(await m.as(asAdminA(), () => batch.assignments([ofB.id]))).toEqual([]);
      const [b] = await m.system(() => batch.assignments([ofB.id]));
      await m.as(asAdminA(), () => batch.updatePriorities([{ id: b.id, priority: 1 }]));
      expect(await priorities(ofB.id)).toEqual([{ target_level: 'organization', priority: 100 }]);
      await expect(m.as(asAdminA(), () => batch.insertAssignments([assignment(ofB.id, { partner_id: t.partnerQ, org_id: t.orgB, target_level: 'site', site_id: t.siteB1 })]))).rejects.toThrow(
        /row-level security/,
      );
      expect(await priorities(ofB.id)).toEqual([{ target_level: 'organization', priority: 100 }]);
    });
  });
});
