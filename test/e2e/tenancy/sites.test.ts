import { ownerQuery } from '../../support/test-app';
import { expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

describe('sites administration', () => {
  let w: TenancyWorld;
  beforeAll(async () => {
    w = await startTenancyWorld();
  }, 60_000);
  afterAll(() => w.t.close());

  const names = (body: { sites: { name: string }[] }) => body.sites.map((s) => s.name).sort();

  it('lists only the sites of the caller organization', async () => {
    const res = await w.as.adminA.get('/sites').expect(200);
    expect(res.body.success).toBe(true);
    expect(names(res.body)).toEqual(['A1', 'A2']);
    expect(res.body.sites.find((s: { name: string }) => s.name === 'A1')).toMatchObject({ id: w.ids.siteA1, orgId: w.ids.orgA, timezone: 'America/Chicago' });
  });

  it('lists every organization of a partner technician and only org A for a technician limited to it', async () => {
    const all = await w.as.tech.get('/sites').expect(200);
    expect(names(all.body)).toEqual(['A1', 'A2', 'B1']);
    const limited = await w.as.techA.get('/sites').expect(200);
    expect(names(limited.body)).toEqual(['A1', 'A2']);
    expectError(await w.as.techA.get(`/sites/${w.ids.siteB1}`), 404, 'not_found');
    expectError(await w.as.techA.get(`/sites?orgId=${w.ids.orgB}`), 404, 'not_found');
  });

  it('filters by organization for a partner technician', async () => {
    const res = await w.as.tech.get(`/sites?orgId=${w.ids.orgB}`).expect(200);
    expect(names(res.body)).toEqual(['B1']);
  });

  it('creates a site in the caller organization and audits it', async () => {
    const res = await w.as.adminA.post('/sites', { name: 'Warehouse', timezone: 'Europe/Paris' }).expect(201);
    expect(res.body).toEqual({ success: true, site: expect.objectContaining({ orgId: w.ids.orgA, name: 'Warehouse', timezone: 'Europe/Paris' }) });
    const [audit] = await ownerQuery<{ action: string; org_id: string; actor_id: string }>(
      `SELECT action, org_id, actor_id FROM audit_logs WHERE resource_id = $1`,
      [res.body.site.id],
    );
    expect(audit).toEqual({ action: 'site.create', org_id: w.ids.orgA, actor_id: w.ids.adminA });
  });

  it('defaults the time zone to UTC and rejects names that are not IANA zones', async () => {
    const res = await w.as.adminA.post('/sites', { name: 'Default TZ' }).expect(201);
    expect(res.body.site.timezone).toBe('UTC');
    const bad = await w.as.adminA.post('/sites', { name: 'Bad TZ', timezone: 'Mars/Olympus' });
    expectError(bad, 400, 'validation_failed');
    expect(bad.body.details).toEqual([expect.objectContaining({ field: 'timezone' })]);
  });

  it('accepts a 255-character name and rejects 256 characters or an empty name', async () => {
    await w.as.adminA.post('/sites', { name: 'n'.repeat(255) }).expect(201);
    const long = await w.as.adminA.post('/sites', { name: 'm'.repeat(256) });
    expectError(long, 400, 'validation_failed');
    expect(long.body.details[0].field).toBe('name');
    expectError(await w.as.adminA.post('/sites', { name: '' }), 400, 'validation_failed');
  });

  it('answers a duplicate name in one organization with 409 name_taken', async () => {
    expectError(await w.as.adminA.post('/sites', { name: 'A1' }), 409, 'name_taken');
  });

  it('requires an organization from a partner technician and creates it there', async () => {
    expectError(await w.as.tech.post('/sites', { name: 'Partner made' }), 400, 'validation_failed');
    const res = await w.as.tech.post('/sites', { orgId: w.ids.orgB, name: 'Partner made' }).expect(201);
    expect(res.body.site.orgId).toBe(w.ids.orgB);
  });

  it('refuses writes to a caller without organizations:write with the forbidden body', async () => {
    const res = await w.as.readerA.post('/sites', { name: 'Nope' });
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('organizations:write');
  });

  it('updates and deletes a site, auditing both', async () => {
    const created = await w.as.adminA.post('/sites', { name: 'Temp' }).expect(201);
    const id = created.body.site.id;
    const upd = await w.as.adminA.patch(`/sites/${id}`, { name: 'Temp 2', timezone: 'Asia/Tokyo' }).expect(200);
    expect(upd.body.site).toMatchObject({ id, name: 'Temp 2', timezone: 'Asia/Tokyo' });
    await w.as.adminA.get(`/sites/${id}`).expect(200);
    expect((await w.as.adminA.delete(`/sites/${id}`).expect(200)).body).toEqual({ success: true });
    expectError(await w.as.adminA.get(`/sites/${id}`), 404, 'not_found');
    const actions = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [id]);
    expect(actions.map((a) => a.action)).toEqual(['site.create', 'site.update', 'site.delete']);
  });

  it('refuses to delete a site that still has devices with 409 site_in_use', async () => {
    expectError(await w.as.adminA.delete(`/sites/${w.ids.siteA2}`), 409, 'site_in_use');
    expect(await ownerQuery(`SELECT 1 FROM sites WHERE id = $1`, [w.ids.siteA2])).toHaveLength(1);
  });

  it('answers another tenant site id with 404 on every route and leaves it untouched', async () => {
    expectError(await w.as.adminA.get(`/sites/${w.ids.siteB1}`), 404, 'not_found');
    expectError(await w.as.adminA.patch(`/sites/${w.ids.siteB1}`, { name: 'Hijacked' }), 404, 'not_found');
    expectError(await w.as.adminA.delete(`/sites/${w.ids.siteB1}`), 404, 'not_found');
    expectError(await w.as.adminA.post('/sites', { orgId: w.ids.orgB, name: 'Planted' }), 404, 'not_found');
    const [row] = await ownerQuery<{ name: string }>(`SELECT name FROM sites WHERE id = $1`, [w.ids.siteB1]);
    expect(row.name).toBe('B1');
    expect(await ownerQuery(`SELECT 1 FROM sites WHERE name = 'Planted'`)).toHaveLength(0);
  });

  it('shows a site-restricted user only their site and refuses writes elsewhere with site_access_denied', async () => {
    const list = await w.as.siteA1.get('/sites').expect(200);
    expect(names(list.body)).toEqual(['A1']);
    expectError(await w.as.siteA1.get(`/sites/${w.ids.siteA2}`), 404, 'not_found');
    expectError(await w.as.siteA1.patch(`/sites/${w.ids.siteA2}`, { name: 'Mine now' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.delete(`/sites/${w.ids.siteA2}`), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post('/sites', { name: 'New site' }), 403, 'site_access_denied');
    await w.as.siteA1.patch(`/sites/${w.ids.siteA1}`, { timezone: 'America/Chicago' }).expect(200);
  });

  it('rejects unknown fields, wrong types, nulls, malformed JSON and non-UUID ids with 400', async () => {
    expectError(await w.as.adminA.post('/sites', { name: 'X', color: 'red' }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/sites', { name: 42 }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/sites', { name: 'nul\u0000byte' }), 400, 'validation_failed');
    expectError(await w.as.adminA.raw('post', '/sites', '[{"name":"in an array"}]'), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/sites', { name: 'X', orgId: 'not-a-uuid' }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/sites/${w.ids.siteA1}`, { name: null }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/sites/${w.ids.siteA1}`, { orgId: w.ids.orgB }), 400, 'validation_failed');
    expectError(await w.as.adminA.raw('post', '/sites', '{"name": "x",'), 400, 'invalid_json');
    expectError(await w.as.adminA.get('/sites/not-a-uuid'), 400, 'invalid_id');
    expectError(await w.as.adminA.get('/sites?orgId=nope'), 400, 'validation_failed');
  });

  it('requires authentication', async () => {
    expectError(await w.caller('garbage').get('/sites'), 401, 'unauthenticated');
  });

  it('answers sites exactly as stored, ordered by organization, name and id, and keeps what a partial update omits', async () => {
    const stored = async (id: string) =>
      (await ownerQuery<{ id: string; org_id: string; name: string; timezone: string; created_at: Date; updated_at: Date }>(`SELECT * FROM sites WHERE id = $1`, [id]))[0];
    const asResponse = (r: Awaited<ReturnType<typeof stored>>) => ({
      id: r.id,
      orgId: r.org_id,
      name: r.name,
      timezone: r.timezone,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    });
    const created = await w.as.adminA.post('/sites', { name: 'Exact', timezone: 'Asia/Tokyo' }).expect(201);
    expect(created.body.site).toEqual(asResponse(await stored(created.body.site.id)));
    const renamed = await w.as.adminA.patch(`/sites/${created.body.site.id}`, { name: 'Exact renamed' }).expect(200);
    const row = await stored(created.body.site.id);
    expect(renamed.body.site).toEqual(asResponse(row));
    expect(row).toMatchObject({ name: 'Exact renamed', timezone: 'Asia/Tokyo' });

    const listed = (await w.as.tech.get('/sites').expect(200)).body.sites as { orgId: string; name: string }[];
    const key = (x: { orgId: string; name: string }) => [x.orgId, x.name] as const;
    const sorted = [...listed].sort((a, b) => (key(a)[0] !== key(b)[0] ? (key(a)[0] < key(b)[0] ? -1 : 1) : key(a)[1] < key(b)[1] ? -1 : key(a)[1] > key(b)[1] ? 1 : 0));
    expect(listed).toEqual(sorted);
  });
});
