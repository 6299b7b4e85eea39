import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

describe('custom fields: definitions partner-wide or per organization, values on devices', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const auth: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    for (const who of ['adminA', 'readerA', 'siteA1User', 'adminB', 'tech']) auth[who] = `Bearer ${await t.token(ids[who])}`;
  });
  afterAll(() => t.close());

  const create = (who: string, body: object) => request(t.http).post('/api/v1/custom-fields').set('Authorization', auth[who]).send(body);
  const setValue = (who: string, device: string, def: string, value: unknown) =>
    request(t.http).put(`/api/v1/devices/${device}/custom-fields/${def}`).set('Authorization', auth[who]).send({ value });

  it('creates an organization field and a partner-wide field that every organization of the partner sees', async () => {
    const org = await create('adminA', { key: 'asset_tag', name: 'Asset tag', type: 'text', validation: { maxLength: 20 } }).expect(201);
    expect(org.body.customField).toMatchObject({ scope: 'organization', orgId: ids.orgA, partnerId: null, key: 'asset_tag', validation: { maxLength: 20 } });
    const partner = await create('tech', { scope: 'partner', key: 'warranty_end', name: 'Warranty end', type: 'date' }).expect(201);
    expect(partner.body.customField).toMatchObject({ scope: 'partner', partnerId: ids.partner, orgId: null });
    const seenByB = await request(t.http).get('/api/v1/custom-fields').set('Authorization', auth.adminB).expect(200);
    expect(seenByB.body.customFields.map((f: { key: string }) => f.key)).toEqual(['warranty_end']);
    const forA = await request(t.http).get('/api/v1/custom-fields').query({ orgId: ids.orgA }).set('Authorization', auth.tech).expect(200);
    expect(forA.body.customFields.map((f: { key: string }) => f.key)).toEqual(['asset_tag', 'warranty_end']);
    const onlyPartner = await request(t.http).get('/api/v1/custom-fields').query({ scope: 'partner' }).set('Authorization', auth.tech).expect(200);
    expect(onlyPartner.body.customFields.map((f: { key: string }) => f.key)).toEqual(['warranty_end']);
    await request(t.http).get(`/api/v1/custom-fields/${org.body.customField.id}`).set('Authorization', auth.adminB).expect(404);
  });

  it('keeps partner-wide fields in partner hands', async () => {
    const denied = await create('adminA', { scope: 'partner', key: 'not_mine', name: 'x', type: 'text' }).expect(403);
    expect(denied.body.code).toBe('partner_scope_required');
    const [partnerField] = (await request(t.http).get('/api/v1/custom-fields').query({ scope: 'partner' }).set('Authorization', auth.adminA).expect(200)).body.customFields;
    const patch = await request(t.http).patch(`/api/v1/custom-fields/${partnerField.id}`).set('Authorization', auth.adminA).send({ name: 'Mine now' }).expect(403);
    expect(patch.body.code).toBe('partner_scope_required');
    await request(t.http).delete(`/api/v1/custom-fields/${partnerField.id}`).set('Authorization', auth.adminA).expect(403);
  });

  it('refuses a key that another field visible to the same organization already uses', async () => {
    const clashOrg = await create('adminB', { key: 'warranty_end', name: 'x', type: 'text' }).expect(409);
    expect(clashOrg.body).toMatchObject({ code: 'key_taken', key: 'warranty_end' });
    const clashPartner = await create('tech', { scope: 'partner', key: 'asset_tag', name: 'x', type: 'text' }).expect(409);
    expect(clashPartner.body.code).toBe('key_taken');
    await create('adminA', { key: 'asset_tag', name: 'again', type: 'text' }).expect(409);
    await create('adminB', { key: 'asset_tag', name: 'B has its own', type: 'number' }).expect(201);
  });

  it('validates definitions for their type', async () => {
    const noOptions = await create('adminA', { key: 'tier', name: 'Tier', type: 'single_select' }).expect(400);
    expect(noOptions.body.details).toEqual([{ field: 'options', message: expect.any(String) }]);
    expect((await create('adminA', { key: 'tier', name: 'Tier', type: 'text', options: ['a'] }).expect(400)).body.details[0].field).toBe('options');
    expect((await create('adminA', { key: 'tier', name: 'Tier', type: 'single_select', options: ['Gold', 'GOLD'] }).expect(400)).body.details[0].field).toBe('options[1]');
    expect((await create('adminA', { key: 'tier', name: 'Tier', type: 'text', validation: { min: 1 } }).expect(400)).body.details[0].field).toBe('validation.min');
    expect((await create('adminA', { key: 'Bad-Key', name: 'x', type: 'text' }).expect(400)).body.details[0].field).toBe('key');
    expect((await create('adminA', { key: 'colour', name: 'x', type: 'colour' }).expect(400)).body.details[0].field).toBe('type');
    await create('adminA', { key: 'n255', name: 'n'.repeat(255), type: 'boolean' }).expect(201);
    await create('adminA', { key: 'n256', name: 'n'.repeat(256), type: 'boolean' }).expect(400);
    const field = (await create('adminA', { key: 'immutable', name: 'x', type: 'text' }).expect(201)).body.customField;
    const typeChange = await request(t.http).patch(`/api/v1/custom-fields/${field.id}`).set('Authorization', auth.adminA).send({ type: 'number' }).expect(400);
    expect(typeChange.body.code).toBe('validation_failed');
  });

  it('stores device values checked against the definition, in canonical form', async () => {
    const tier = (await create('adminA', { key: 'tier', name: 'Tier', type: 'single_select', options: ['Gold', 'Silver'] }).expect(201)).body.customField;
    const roles = (await create('adminA', { key: 'roles', name: 'Roles', type: 'multi_select', options: ['web', 'db', 'dns'] }).expect(201)).body.customField;
    const cores = (await create('adminA', { key: 'cores', name: 'Cores', type: 'number', validation: { min: 1, max: 256, integer: true } }).expect(201)).body.customField;
    expect((await setValue('adminA', ids.deviceA1, tier.id, 'gold').expect(200)).body.value).toMatchObject({ key: 'tier', value: 'Gold' });
    expect((await setValue('adminA', ids.deviceA1, roles.id, ['dns', 'web']).expect(200)).body.value.value).toEqual(['web', 'dns']);
    await setValue('adminA', ids.deviceA1, cores.id, 256).expect(200);
    for (const [def, bad] of [[tier.id, 'Bronze'], [roles.id, []], [cores.id, 257], [cores.id, 2.5], [cores.id, '8']] as const) {
      const res = await setValue('adminA', ids.deviceA1, def, bad).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'value', message: expect.any(String) }] });
    }
    const list = await request(t.http).get(`/api/v1/devices/${ids.deviceA1}/custom-fields`).set('Authorization', auth.adminA).expect(200);
    expect(list.body.values.map((v: { key: string; value: unknown }) => [v.key, v.value])).toEqual([['cores', 256], ['roles', ['web', 'dns']], ['tier', 'Gold']]);
    await request(t.http).delete(`/api/v1/devices/${ids.deviceA1}/custom-fields/${cores.id}`).set('Authorization', auth.adminA).expect(200);
    await request(t.http).delete(`/api/v1/devices/${ids.deviceA1}/custom-fields/${cores.id}`).set('Authorization', auth.adminA).expect(404);
    await setValue('adminA', ids.deviceA1, tier.id, null).expect(400);
  });

  it('applies a partner-wide field to every organization and an organization field to its own only', async () => {
    const [warranty] = (await request(t.http).get('/api/v1/custom-fields').query({ scope: 'partner' }).set('Authorization', auth.adminB).expect(200)).body.customFields;
    await setValue('adminB', ids.deviceB1, warranty.id, '2027-06-30').expect(200);
    await setValue('adminB', ids.deviceB1, warranty.id, '2027-02-30').expect(400);
    const assetTag = (await request(t.http).get('/api/v1/custom-fields').query({ orgId: ids.orgA }).set('Authorization', auth.tech).expect(200)).body.customFields.find(
      (f: { key: string; orgId: string }) => f.key === 'asset_tag' && f.orgId === ids.orgA,
    );
    const wrongOrg = await setValue('tech', ids.deviceB1, assetTag.id, 'X-1').expect(400);
    expect(wrongOrg.body.code).toBe('custom_field_not_applicable');
    await setValue('adminB', ids.deviceB1, assetTag.id, 'X-1').expect(404);
    await setValue('adminA', ids.deviceB1, assetTag.id, 'X-1').expect(404);
    await request(t.http).get(`/api/v1/devices/${ids.deviceB1}/custom-fields`).set('Authorization', auth.adminA).expect(404);
  });

  it('bounds values by the device\'s site and the custom-fields permissions', async () => {
    const tag = (await request(t.http).get('/api/v1/custom-fields').query({ orgId: ids.orgA }).set('Authorization', auth.adminA).expect(200)).body.customFields.find((f: { key: string }) => f.key === 'asset_tag');
    await setValue('siteA1User', ids.deviceA1, tag.id, 'A1-TAG').expect(200);
    const other = await setValue('siteA1User', ids.deviceA2, tag.id, 'A2-TAG').expect(403);
    expect(other.body.code).toBe('site_access_denied');
    await request(t.http).get(`/api/v1/devices/${ids.deviceA2}/custom-fields`).set('Authorization', auth.siteA1User).expect(404);
    expect((await create('siteA1User', { key: 'site_user_field', name: 'x', type: 'text' }).expect(403)).body.code).toBe('site_access_denied');
    await request(t.http).get('/api/v1/custom-fields').set('Authorization', auth.readerA).expect(403);
    await setValue('readerA', ids.deviceA1, tag.id, 'R').expect(403);
  });

  it('refuses to remove an option that devices still use, and removes unused ones', async () => {
    const f = (await create('adminA', { key: 'plan', name: 'Plan', type: 'single_select', options: ['Basic', 'Pro', 'Max'] }).expect(201)).body.customField;
    await setValue('adminA', ids.deviceA1, f.id, 'Pro').expect(200);
    const refused = await request(t.http).patch(`/api/v1/custom-fields/${f.id}`).set('Authorization', auth.adminA).send({ options: ['Basic'] }).expect(409);
    expect(refused.body).toMatchObject({ code: 'option_in_use', options: ['Pro'] });
    const ok = await request(t.http).patch(`/api/v1/custom-fields/${f.id}`).set('Authorization', auth.adminA).send({ options: ['Pro', 'Enterprise'], name: 'Plan level' }).expect(200);
    expect(ok.body.customField).toMatchObject({ options: ['Pro', 'Enterprise'], name: 'Plan level' });
  });

  it('deletes a field with its values, unless a dynamic group filters on it', async () => {
    const f = (await create('adminA', { key: 'temp', name: 'Temp', type: 'boolean' }).expect(201)).body.customField;
    await setValue('adminA', ids.deviceA1, f.id, true).expect(200);
    const [group] = await ownerQuery<{ id: string }>(
      `INSERT INTO device_groups (org_id, name, kind, filter) VALUES ($1, 'Temp group', 'dynamic', $2) RETURNING id`,
      [ids.orgA, JSON.stringify({ all: [{ customField: f.id, op: 'eq', value: true }] })],
    );
    const refused = await request(t.http).delete(`/api/v1/custom-fields/${f.id}`).set('Authorization', auth.adminA).expect(409);
    expect(refused.body).toMatchObject({ code: 'custom_field_in_use', groupIds: [group.id] });
    await ownerQuery(`DELETE FROM device_groups WHERE id = $1`, [group.id]);
    await request(t.http).delete(`/api/v1/custom-fields/${f.id}`).set('Authorization', auth.adminA).expect(200);
    expect(await ownerQuery(`SELECT 1 FROM custom_field_values WHERE definition_id = $1`, [f.id])).toEqual([]);
    const [audit] = await ownerQuery<{ details: object }>(`SELECT details FROM audit_logs WHERE action = 'custom_field.delete' AND resource_id = $1`, [f.id]);
    expect(audit.details).toEqual({ key: 'temp', valuesDeleted: 1 });
  });

  it('answers a definition byte for byte the same on create, read, update and in the list, which is ordered by key', async () => {
    const created = await create('adminA', { key: 'byte_exact', name: 'Byte exact', type: 'number', validation: { max: 10, min: 1 } }).expect(201);
    const path = `/api/v1/custom-fields/${created.body.customField.id}`;
    expect((await request(t.http).get(path).set('Authorization', auth.adminA).expect(200)).text).toBe(created.text);
    const updated = await request(t.http).patch(path).set('Authorization', auth.adminA).send({ description: 'now described' }).expect(200);
    expect((await request(t.http).get(path).set('Authorization', auth.adminA).expect(200)).text).toBe(updated.text);
    const listed = (await request(t.http).get('/api/v1/custom-fields').query({ orgId: ids.orgA }).set('Authorization', auth.adminA).expect(200)).body.customFields as {
      id: string;
      key: string;
      scope: string;
    }[];
    expect(listed.find((f) => f.id === created.body.customField.id)).toEqual(updated.body.customField);
    const keys = listed.map((f) => f.key);
    expect(keys).toEqual([...keys].sort());
    expect(listed.some((f) => f.scope === 'partner')).toBe(true);
  });
});
