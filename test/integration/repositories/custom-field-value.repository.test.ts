import { CustomFieldValueEntity } from '../../../src/modules/content/custom-fields/custom-field-value.entity';
import { CustomFieldEntity } from '../../../src/modules/content/custom-fields/custom-field.entity';
import { CustomFieldRepository } from '../../../src/modules/content/custom-fields/custom-field.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Device values of custom fields (custom_field_values) through CustomFieldValueEntity: a value is
 * written only when it changes, read with its definition in key order, and another organization's
 * values are neither seen, written nor deleted.
 */
describe('custom-field values through the entity', () => {
  let m: Medium;
  let t: TenantRows;
  let fields: CustomFieldRepository;
  let ownA: string;
  let sharedP: string;
  let ownB: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const stored = async (deviceId: string) =>
    (await m.owner.query(`SELECT definition_id, value, updated_at FROM custom_field_values WHERE device_id = $1 ORDER BY definition_id`, [deviceId])).rows;
  const definition = async (owner: { orgId?: string; partnerId?: string }, key: string, type = 'text', options: string[] = []) =>
    (
      await m.owner.query(`INSERT INTO custom_field_definitions (org_id, partner_id, key, name, type, options) VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING id`, [
        owner.orgId ?? null,
        owner.partnerId ?? null,
        key,
        `Field ${key}`,
        type,
        JSON.stringify(options),
      ])
    ).rows[0].id as string;

  beforeAll(async () => {
    m = await startMedium([CustomFieldRepository], {}, { entities: [CustomFieldEntity, CustomFieldValueEntity] });
    fields = m.get(CustomFieldRepository);
    t = await seedTenants(m.owner);
    ownA = await definition({ orgId: t.orgA }, 'zz_owner');
    sharedP = await definition({ partnerId: t.partnerP }, 'aa_tags', 'multi_select', ['x', 'y']);
    ownB = await definition({ orgId: t.orgB }, 'b_owner');
  });
  afterAll(() => m.close());

  it('writes a value, answers 0 for the same value and keeps its updated_at, and 1 for a new one', async () => {
    expect(await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA2, ownA, 'alice'))).toBe(1);
    const [first] = await stored(t.deviceA2);
    expect(await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA2, ownA, 'alice'))).toBe(0);
    expect(await stored(t.deviceA2)).toEqual([first]);
    expect(await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA2, ownA, 'bob'))).toBe(1);
    const [second] = await stored(t.deviceA2);
    expect(second.value).toBe('bob');
    expect(second.updated_at.getTime()).toBeGreaterThan(first.updated_at.getTime());
  });

  it('lists a device’s values with their definitions by key, the partner-wide field’s included, and one value alone', async () => {
    await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA1, ownA, 'carol'));
    await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA1, sharedP, ['y', 'x']));
    const values = await m.as(asAdminA(), () => fields.values(t.orgA, t.deviceA1));
    expect(values.map((v) => [v.definitionId, v.definition.key, v.definition.type, v.value])).toEqual([
      [sharedP, 'aa_tags', 'multi_select', ['y', 'x']],
      [ownA, 'zz_owner', 'text', 'carol'],
    ]);
    expect(values[0].updatedAt).toBeInstanceOf(Date);
    expect((await m.as(asAdminA(), () => fields.values(t.orgA, t.deviceA1, ownA))).map((v) => v.value)).toEqual(['carol']);
    expect(await m.as(asTech(), () => fields.countValues(sharedP))).toBe(1);
  });

  it('deletes a value once, answering how many it deleted', async () => {
    await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA2, sharedP, ['x']));
    expect(await m.as(asAdminA(), () => fields.deleteValue(t.orgA, t.deviceA2, sharedP))).toBe(1);
    expect(await m.as(asAdminA(), () => fields.deleteValue(t.orgA, t.deviceA2, sharedP))).toBe(0);
    expect((await stored(t.deviceA2)).map((r) => r.definition_id)).toEqual([ownA]);
  });

  it('neither shows, counts, changes nor deletes another organization’s values, and refuses to write one', async () => {
    await m.as(asAdminB(), () => fields.upsertValue(t.orgB, t.deviceB1, ownB, 'theirs'));
    expect(await m.as(asAdminA(), () => fields.values(t.orgB, t.deviceB1))).toEqual([]);
    expect(await m.as(asAdminA(), () => fields.countValues(ownB))).toBe(0);
    expect(await m.as(asAdminA(), () => fields.deleteValue(t.orgB, t.deviceB1, ownB))).toBe(0);
    await expect(m.as(asAdminA(), () => fields.upsertValue(t.orgB, t.deviceB1, ownB, 'hijacked'))).rejects.toThrow(/row-level security/);
    expect(await m.as(asAdminB(), () => fields.values(t.orgA, t.deviceA1))).toEqual([]);
    expect((await stored(t.deviceB1)).map((r) => r.value)).toEqual(['theirs']);
  });
});
