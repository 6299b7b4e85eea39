import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';

/**
 * Issue 13, item 14d: deleting a custom field that dynamic groups still filter on answered 409
 * with the ids of every such group, read in system context, so a caller learned the groups of
 * organizations out of its reach. The refusal is still decided across organizations; the answer
 * names only groups the caller can see.
 */
describe('attack: custom field deletion listing dynamic groups of other organizations', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const auth: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    for (const who of ['adminA', 'adminB', 'tech', 'techA']) auth[who] = `Bearer ${await t.token(ids[who])}`;
  });
  afterAll(() => t.close());

  const createField = async (who: string, body: object): Promise<string> =>
    (await request(t.http).post('/api/v1/custom-fields').set('Authorization', auth[who]).send(body).expect(201)).body.customField.id;

  async function dynamicGroup(org: string, name: string, fieldId: string): Promise<string> {
    const [row] = await ownerQuery<{ id: string }>(`INSERT INTO device_groups (org_id, name, kind, filter) VALUES ($1, $2, 'dynamic', $3) RETURNING id`, [
      ids[org],
      name,
      JSON.stringify({ all: [{ customField: fieldId, op: 'eq', value: 'x' }] }),
    ]);
    return row.id;
  }

  it('a technician limited to organization A learns nothing of organization B groups filtering on a partner-wide field', async () => {
    const field = await createField('tech', { scope: 'partner', key: 'contract_tier', name: 'Contract tier', type: 'text' });
    const groupB = await dynamicGroup('orgB', 'B contract group', field);
    const res = await request(t.http).delete(`/api/v1/custom-fields/${field}`).set('Authorization', auth.techA);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    expect(JSON.stringify(res.body)).not.toContain(groupB);
    expect(await ownerQuery(`SELECT 1 FROM custom_field_definitions WHERE id = $1`, [field])).toHaveLength(1);
  });

  it('a technician limited to organization A cannot probe the keys of organization B fields by creating a partner-wide one', async () => {
    await createField('adminB', { key: 'b_only_key', name: 'B only', type: 'text' });
    const res = await request(t.http).post('/api/v1/custom-fields').set('Authorization', auth.techA).send({ scope: 'partner', key: 'b_only_key', name: 'probe', type: 'text' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    const control = await request(t.http).post('/api/v1/custom-fields').set('Authorization', auth.techA).send({ scope: 'partner', key: 'never_used_key', name: 'probe', type: 'text' });
    expect(control.status).toBe(403);
  });

  it('an organization admin is refused without the ids of another organization groups that reference the field', async () => {
    const field = await createField('adminA', { key: 'rack_slot', name: 'Rack slot', type: 'text' });
    const groupA = await dynamicGroup('orgA', 'A rack group', field);
    // A filter in organization B naming organization A's field (an import or an older version could leave one).
    const groupB = await dynamicGroup('orgB', 'B rack group', field);
    const res = await request(t.http).delete(`/api/v1/custom-fields/${field}`).set('Authorization', auth.adminA).expect(409);
    expect(res.body).toMatchObject({ code: 'custom_field_in_use', groupIds: [groupA] });
    expect(JSON.stringify(res.body)).not.toContain(groupB);
  });

  it('the refusal still holds when every referencing group is out of sight, and names none', async () => {
    const field = await createField('adminA', { key: 'hidden_ref', name: 'Hidden', type: 'text' });
    const groupB = await dynamicGroup('orgB', 'B hidden group', field);
    const res = await request(t.http).delete(`/api/v1/custom-fields/${field}`).set('Authorization', auth.adminA).expect(409);
    expect(res.body).toMatchObject({ code: 'custom_field_in_use', groupIds: [] });
    expect(JSON.stringify(res.body)).not.toContain(groupB);
    expect(await ownerQuery(`SELECT 1 FROM custom_field_definitions WHERE id = $1`, [field])).toHaveLength(1);
  });

  it('a partner-wide technician, who reaches every organization, is told every group', async () => {
    const field = await createField('tech', { scope: 'partner', key: 'site_class', name: 'Site class', type: 'text' });
    const groupA = await dynamicGroup('orgA', 'A class group', field);
    const groupB = await dynamicGroup('orgB', 'B class group', field);
    const res = await request(t.http).delete(`/api/v1/custom-fields/${field}`).set('Authorization', auth.tech).expect(409);
    expect([...res.body.groupIds].sort()).toEqual([groupA, groupB].sort());
  });
});
