import { ownerQuery } from '../../support/test-app';
import { expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

interface StoredOrganization {
  id: string;
  partner_id: string;
  name: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

const stored = async (id: string) => (await ownerQuery<StoredOrganization>(`SELECT * FROM organizations WHERE id = $1`, [id]))[0];

/** The response body of an organization, from what the database holds. */
const asResponse = (r: StoredOrganization) => ({
  id: r.id,
  partnerId: r.partner_id,
  name: r.name,
  status: r.status,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

describe('organizations administration', () => {
  let w: TenancyWorld;
  beforeAll(async () => {
    w = await startTenancyWorld();
  }, 60_000);
  afterAll(() => w.t.close());

  it('creates an organization and answers it exactly as stored, with the database timestamps', async () => {
    const res = await w.as.tech.post('/organizations', { name: 'Created Org' }).expect(201);
    const row = await stored(res.body.organization.id);
    expect(row).toMatchObject({ partner_id: w.ids.partner, name: 'Created Org', status: 'active' });
    expect(res.body).toEqual({ success: true, organization: asResponse(row) });
    expect((await w.as.tech.get(`/organizations/${row.id}`).expect(200)).body).toEqual({ success: true, organization: asResponse(row) });
  });

  it('keeps the fields an update omits, moves updatedAt and keeps createdAt', async () => {
    const created = (await w.as.tech.post('/organizations', { name: 'Patch Me' }).expect(201)).body.organization;
    const res = await w.as.tech.patch(`/organizations/${created.id}`, { name: 'Patched' }).expect(200);
    const row = await stored(created.id);
    expect(res.body).toEqual({ success: true, organization: asResponse(row) });
    expect(res.body.organization).toMatchObject({ name: 'Patched', status: 'active', createdAt: created.createdAt });
    expect(row.updated_at.getTime()).toBeGreaterThan(row.created_at.getTime());
    const suspended = await w.as.tech.patch(`/organizations/${created.id}`, { status: 'suspended' }).expect(200);
    expect(suspended.body.organization).toMatchObject({ name: 'Patched', status: 'suspended' });
  });

  it('lists the active organizations a caller reaches by name', async () => {
    const names = (await w.as.tech.get('/organizations').expect(200)).body.organizations.map((o: { name: string }) => o.name);
    const [orgA, orgB] = w.f.organizations!.map((o) => o.name);
    expect(names).toEqual(['Created Org', orgA, orgB]); // 'Patched' is suspended: out of every session's reach
    expect((await w.as.adminA.get('/organizations').expect(200)).body.organizations.map((o: { id: string }) => o.id)).toEqual([w.ids.orgA]);
  });

  it("answers another tenant's organization with 404 and leaves it unchanged", async () => {
    expectError(await w.as.adminB.patch(`/organizations/${w.ids.orgA}`, { name: 'hijack' }), 404, 'not_found');
    expect((await stored(w.ids.orgA)).name).not.toBe('hijack');
  });
});
