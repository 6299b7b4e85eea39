import { randomUUID } from 'node:crypto';
import { CustomFieldBatchRepository, type CustomFieldRecord } from '../../../src/modules/content/custom-fields/custom-field-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Custom field definitions and device values as the importer writes them. Partner P has a
 * partner-wide field, A and A2nd a field each, B one out of reach.
 */
describe('CustomFieldBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let batch: CustomFieldBatchRepository;
  let ofP: CustomFieldRecord;
  let ofA: CustomFieldRecord;
  let ofA2: CustomFieldRecord;
  let ofB: CustomFieldRecord;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const field = (over: Partial<CustomFieldRecord>): CustomFieldRecord => ({
    id: randomUUID(),
    partner_id: null,
    org_id: null,
    key: `field_${randomUUID().slice(0, 8)}`,
    name: 'A field',
    description: null,
    type: 'text',
    options: [],
    validation: {},
    ...over,
  });
  const stored = async (id: string) =>
    (await m.owner.query(`SELECT id, partner_id, org_id, key, name, description, type, options, validation FROM custom_field_definitions WHERE id = $1`, [id])).rows[0] as
      | CustomFieldRecord
      | undefined;
  const valuesOf = async (definitionId: string) =>
    (await m.owner.query(`SELECT org_id, device_id, definition_id, value FROM custom_field_values WHERE definition_id = $1 ORDER BY device_id`, [definitionId])).rows;

  beforeAll(async () => {
    m = await startMedium([CustomFieldBatchRepository]);
    batch = m.get(CustomFieldBatchRepository);
    t = await seedTenants(m.owner);
    ofP = field({ partner_id: t.partnerP, key: 'tier', type: 'single_select', options: ['gold', 'silver'] });
    ofA = field({ org_id: t.orgA, key: 'owner', validation: { maxLength: 40 } });
    ofA2 = field({ org_id: t.orgA2, key: 'rack', type: 'number', validation: { min: 1, max: 42, integer: true } });
    ofB = field({ org_id: t.orgB, key: 'owner' });
    for (const f of [ofP, ofA, ofA2, ofB]) await m.system(() => batch.insertDefinition(f));
  });
  afterAll(() => m.close());

  describe('definitions', () => {
    it('answers the partner’s own definitions and those of the organizations asked for', async () => {
      const ids = async (orgIds: string[]) => (await m.as(asTech(), () => batch.definitions(t.partnerP, orgIds))).map((d) => d.id).sort();
      expect(await ids([t.orgA])).toEqual([ofP.id, ofA.id].sort());
      expect(await ids([t.orgA, t.orgA2])).toEqual([ofP.id, ofA.id, ofA2.id].sort());
      expect(await ids([])).toEqual([ofP.id]);
      const listed = await m.as(asTech(), () => batch.definitions(t.partnerP, [t.orgA, t.orgA2]));
      expect(listed.find((d) => d.id === ofA2.id)).toEqual(ofA2);
    });

    it('answers nothing of another partner or its organizations', async () => {
      expect(await m.as(asTech(), () => batch.definitions(t.partnerQ, [t.orgB]))).toEqual([]);
      expect((await m.as(asAdminA(), () => batch.definitions(t.partnerP, [t.orgA, t.orgB]))).map((d) => d.id).sort()).toEqual([ofP.id, ofA.id].sort());
    });

    it('answers the keys of organization fields under the partner that the caller sees, once each', async () => {
      await m.as(asTech(), () => batch.insertDefinition(field({ org_id: t.orgA2, key: 'owner' })));
      expect(await m.as(asTech(), () => batch.orgFieldKeys(t.partnerP))).toEqual(new Set(['owner', 'rack']));
      expect(await m.as(asAdminA(), () => batch.orgFieldKeys(t.partnerP))).toEqual(new Set(['owner']));
      expect(await m.as(asTech(), () => batch.orgFieldKeys(t.partnerQ))).toEqual(new Set());
    });
  });

  describe('writing definitions', () => {
    it('inserts a definition, and updates its name, description, options and validation but never its key or type', async () => {
      const f = field({ org_id: t.orgA, type: 'multi_select', options: ['a', 'b'] });
      await m.as(asAdminA(), () => batch.insertDefinition(f));
      expect(await stored(f.id)).toEqual(f);
      await m.as(asAdminA(), () => batch.updateDefinition({ ...f, key: 'changed_key', type: 'text', name: 'Renamed', description: 'Described', options: ['a', 'b', 'c'], validation: {} }));
      expect(await stored(f.id)).toEqual({ ...f, name: 'Renamed', description: 'Described', options: ['a', 'b', 'c'] });
    });

    it('refuses a malformed key and a select without options', async () => {
      await expect(m.as(asAdminA(), () => batch.insertDefinition(field({ org_id: t.orgA, key: 'Not A Key' })))).rejects.toThrow(/check constraint/);
      await expect(m.as(asTech(), () => batch.updateDefinition({ ...ofP, options: [] }))).rejects.toThrow(/check constraint/);
      expect(await stored(ofP.id)).toEqual(ofP);
    });

    it('keeps partner definitions to partner-wide callers, and leaves another tenant’s alone', async () => {
      await expect(m.as(asTech(false), () => batch.insertDefinition(field({ partner_id: t.partnerP })))).rejects.toThrow(/partner_wide_write_denied/);
      await expect(m.as(asTech(false), () => batch.updateDefinition({ ...ofP, name: 'narrowed' }))).rejects.toThrow(/partner_wide_write_denied/);
      await expect(m.as(asAdminA(), () => batch.insertDefinition(field({ org_id: t.orgB })))).rejects.toThrow(/row-level security/);
      await m.as(asAdminA(), () => batch.updateDefinition({ ...ofB, name: 'hijacked' }));
      await m.as(asAdminA(), () => batch.updateDefinition({ ...ofP, name: 'hijacked' }));
      expect(await stored(ofB.id)).toEqual(ofB);
      expect(await stored(ofP.id)).toEqual(ofP);
    });
  });

  describe('values', () => {
    it('writes values, replaces those already present, and writes nothing for an empty batch', async () => {
      await m.as(asTech(), () =>
        batch.upsertValues([
          { org_id: t.orgA, device_id: t.deviceA1, definition_id: ofA.id, value: 'alice' },
          { org_id: t.orgA, device_id: t.deviceA2, definition_id: ofP.id, value: 'gold' },
          { org_id: t.orgA2, device_id: t.deviceX1, definition_id: ofA2.id, value: 12 },
        ]),
      );
      await m.as(asTech(), () => batch.upsertValues([{ org_id: t.orgA, device_id: t.deviceA1, definition_id: ofA.id, value: 'bob' }]));
      await m.as(asTech(), () => batch.upsertValues([]));
      expect(await valuesOf(ofA.id)).toEqual([{ org_id: t.orgA, device_id: t.deviceA1, definition_id: ofA.id, value: 'bob' }]);
      expect((await m.as(asTech(), () => batch.values([t.orgA, t.orgA2]))).map((v) => [v.device_id, v.value]).sort()).toEqual(
        [
          [t.deviceA1, 'bob'],
          [t.deviceA2, 'gold'],
          [t.deviceX1, 12],
        ].sort(),
      );
      expect(await m.as(asTech(), () => batch.values([]))).toEqual([]);
    });

    it('recomputes the dynamic groups that filter on a field when its values are written', async () => {
      const group = (
        await m.owner.query<{ id: string }>(`INSERT INTO device_groups (org_id, name, kind, filter) VALUES ($1, 'rack 7', 'dynamic', $2) RETURNING id`, [
          t.orgA2,
          { customField: ofA2.id, op: 'eq', value: 7 },
        ])
      ).rows[0].id;
      const members = async () => (await m.owner.query(`SELECT device_id FROM device_group_members WHERE group_id = $1`, [group])).rows.map((r) => r.device_id);
      expect(await members()).toEqual([]);
      await m.as(asTech(), () => batch.upsertValues([{ org_id: t.orgA2, device_id: t.deviceX1, definition_id: ofA2.id, value: 7 }]));
      expect(await members()).toEqual([t.deviceX1]);
    });

    it('refuses a value of a definition that does not apply to the device’s organization', async () => {
      await expect(m.as(asTech(), () => batch.upsertValues([{ org_id: t.orgA, device_id: t.deviceA1, definition_id: ofA2.id, value: 3 }]))).rejects.toThrow(/does not apply/);
      expect((await valuesOf(ofA2.id)).map((v) => v.device_id)).not.toContain(t.deviceA1);
    });

    it('neither shows nor writes values of another tenant', async () => {
      await m.owner.query(`INSERT INTO custom_field_values (org_id, device_id, definition_id, value) VALUES ($1, $2, $3, '"of b"')`, [t.orgB, t.deviceB1, ofB.id]);
      expect(await m.as(asAdminA(), () => batch.values([t.orgB]))).toEqual([]);
      await expect(m.as(asAdminA(), () => batch.upsertValues([{ org_id: t.orgB, device_id: t.deviceB1, definition_id: ofB.id, value: 'hijacked' }]))).rejects.toThrow(/row-level security/);
      expect(await valuesOf(ofB.id)).toEqual([{ org_id: t.orgB, device_id: t.deviceB1, definition_id: ofB.id, value: 'of b' }]);
    });
  });
});
