import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

describe('contacts: CRUD, search, tenant and site scoping', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const auth: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    for (const who of ['adminA', 'readerA', 'siteA1User', 'adminB', 'tech']) auth[who] = `Bearer ${await t.token(ids[who])}`;
  });
  afterAll(() => t.close());

  const post = (who: string, body: object) => request(t.http).post('/api/v1/contacts').set('Authorization', auth[who]).send(body);

  it('creates an organization-level contact with phones and reads it back', async () => {
    const res = await post('adminA', { name: 'Ann Lee', email: 'ann@a.example', phones: [{ type: 'work', number: '+1 (555) 010-0001' }], title: 'CTO', externalId: 'ext-1' }).expect(201);
    expect(res.body).toEqual({ success: true, contact: expect.objectContaining({ orgId: ids.orgA, siteId: null, name: 'Ann Lee', externalId: 'ext-1', phones: [{ type: 'work', number: '+1 (555) 010-0001' }] }) });
    const got = await request(t.http).get(`/api/v1/contacts/${res.body.contact.id}`).set('Authorization', auth.adminA).expect(200);
    expect(got.body.contact.email).toBe('ann@a.example');
    const audit = await ownerQuery(`SELECT action FROM audit_logs WHERE resource_id = $1`, [res.body.contact.id]);
    expect(audit).toEqual([{ action: 'contact.create' }]);
  });

  it('keeps externalId unique within an organization but not across organizations', async () => {
    await post('adminA', { name: 'Dup', externalId: 'dup-1' }).expect(201);
    const again = await post('adminA', { name: 'Dup 2', externalId: 'dup-1' }).expect(409);
    expect(again.body.code).toBe('external_id_taken');
    await post('adminB', { name: 'Dup in B', externalId: 'dup-1' }).expect(201);
  });

  it('searches by name, email or title and paginates', async () => {
    for (let i = 0; i < 3; i++) await post('adminA', { name: `Searchable ${i}`, title: 'Zebra keeper' }).expect(201);
    const page = await request(t.http).get('/api/v1/contacts').query({ q: 'zebra', limit: 2, page: 2 }).set('Authorization', auth.adminA).expect(200);
    expect(page.body.pagination).toEqual({ page: 2, limit: 2, total: 3 });
    expect(page.body.contacts).toHaveLength(1);
    const byMail = await request(t.http).get('/api/v1/contacts').query({ q: 'ANN@A' }).set('Authorization', auth.adminA).expect(200);
    expect(byMail.body.contacts.map((c: { name: string }) => c.name)).toEqual(['Ann Lee']);
    // LIKE wildcards in the search are literal
    const wild = await request(t.http).get('/api/v1/contacts').query({ q: '%' }).set('Authorization', auth.adminA).expect(200);
    expect(wild.body.contacts).toEqual([]);
  });

  it('updates fields, clears optional ones with null and records the changed fields', async () => {
    const c = (await post('adminA', { name: 'To edit', email: 'edit@a.example', title: 'Old' }).expect(201)).body.contact;
    const res = await request(t.http).patch(`/api/v1/contacts/${c.id}`).set('Authorization', auth.adminA).send({ title: 'New', email: null, siteId: ids.siteA2 }).expect(200);
    expect(res.body.contact).toMatchObject({ title: 'New', email: null, siteId: ids.siteA2, name: 'To edit' });
    const [row] = await ownerQuery<{ details: { changed: string[] } }>(`SELECT details FROM audit_logs WHERE resource_id = $1 AND action = 'contact.update'`, [c.id]);
    expect(row.details.changed.sort()).toEqual(['email', 'siteId', 'title']);
  });

  it('deletes a contact', async () => {
    const c = (await post('adminA', { name: 'Gone soon' }).expect(201)).body.contact;
    await request(t.http).delete(`/api/v1/contacts/${c.id}`).set('Authorization', auth.adminA).expect(200, { success: true });
    await request(t.http).get(`/api/v1/contacts/${c.id}`).set('Authorization', auth.adminA).expect(404);
  });

  it('needs the contacts permissions', async () => {
    const read = await request(t.http).get('/api/v1/contacts').set('Authorization', auth.readerA).expect(403);
    expect(read.body).toMatchObject({ code: 'forbidden', permission: 'contacts:read' });
    await post('readerA', { name: 'Nope' }).expect(403);
  });

  it('hides another tenant\'s contacts: 404 on their id and absent from lists', async () => {
    const b = (await post('adminB', { name: 'Only in B' }).expect(201)).body.contact;
    await request(t.http).get(`/api/v1/contacts/${b.id}`).set('Authorization', auth.adminA).expect(404);
    await request(t.http).patch(`/api/v1/contacts/${b.id}`).set('Authorization', auth.adminA).send({ name: 'x' }).expect(404);
    await request(t.http).delete(`/api/v1/contacts/${b.id}`).set('Authorization', auth.adminA).expect(404);
    const list = await request(t.http).get('/api/v1/contacts').query({ q: 'Only in B' }).set('Authorization', auth.adminA).expect(200);
    expect(list.body.contacts).toEqual([]);
    await request(t.http).get('/api/v1/contacts').query({ orgId: ids.orgB }).set('Authorization', auth.adminA).expect(404);
  });

  it('requires orgId from a partner technician and refuses a site of another organization', async () => {
    const missing = await post('tech', { name: 'Tech made' }).expect(400);
    expect(missing.body.details).toEqual([{ field: 'orgId', message: expect.any(String) }]);
    await post('tech', { name: 'Tech made', orgId: ids.orgB }).expect(201);
    const wrongSite = await post('tech', { name: 'Tech made', orgId: ids.orgA, siteId: ids.siteB1 }).expect(400);
    expect(wrongSite.body.code).toBe('site_not_in_organization');
  });

  it('shows a site-restricted user organization-level contacts and their sites\' contacts only', async () => {
    const a1 = (await post('adminA', { name: 'Pinned A1', siteId: ids.siteA1 }).expect(201)).body.contact;
    const a2 = (await post('adminA', { name: 'Pinned A2', siteId: ids.siteA2 }).expect(201)).body.contact;
    const list = await request(t.http).get('/api/v1/contacts').query({ q: 'Pinned', limit: 100 }).set('Authorization', auth.siteA1User).expect(200);
    expect(list.body.contacts.map((c: { id: string }) => c.id)).toEqual([a1.id]);
    const all = await request(t.http).get('/api/v1/contacts').query({ limit: 100 }).set('Authorization', auth.siteA1User).expect(200);
    expect(all.body.contacts.every((c: { siteId: string | null }) => c.siteId === null || c.siteId === ids.siteA1)).toBe(true);
    expect(all.body.contacts.some((c: { siteId: string | null }) => c.siteId === null)).toBe(true);
    await request(t.http).get(`/api/v1/contacts/${a2.id}`).set('Authorization', auth.siteA1User).expect(404);
    await request(t.http).get('/api/v1/contacts').query({ siteId: ids.siteA2 }).set('Authorization', auth.siteA1User).expect(403);
  });

  it('lets a site-restricted user write only contacts pinned to their sites', async () => {
    const other = await post('siteA1User', { name: 'In A2', siteId: ids.siteA2 }).expect(403);
    expect(other.body.code).toBe('site_access_denied');
    const orgLevel = await post('siteA1User', { name: 'Org level' }).expect(403);
    expect(orgLevel.body.code).toBe('site_access_denied');
    const mine = (await post('siteA1User', { name: 'In A1', siteId: ids.siteA1 }).expect(201)).body.contact;
    const move = await request(t.http).patch(`/api/v1/contacts/${mine.id}`).set('Authorization', auth.siteA1User).send({ siteId: ids.siteA2 }).expect(403);
    expect(move.body.code).toBe('site_access_denied');
    const orgContact = (await post('adminA', { name: 'Shared' }).expect(201)).body.contact;
    await request(t.http).patch(`/api/v1/contacts/${orgContact.id}`).set('Authorization', auth.siteA1User).send({ name: 'Hijack' }).expect(403);
    await request(t.http).delete(`/api/v1/contacts/${mine.id}`).set('Authorization', auth.siteA1User).expect(200);
  });

  it('validates input at its limits and answers bad input with 400 in the contract shape', async () => {
    await post('adminA', { name: 'n'.repeat(255) }).expect(201);
    const long = await post('adminA', { name: 'n'.repeat(256) }).expect(400);
    expect(long.body).toMatchObject({ success: false, code: 'validation_failed', details: [{ field: 'name', message: expect.any(String) }] });
    expect((await post('adminA', { name: 'x', email: 'not-an-email' }).expect(400)).body.details[0].field).toBe('email');
    expect((await post('adminA', { name: 'x', phones: [{ type: 'pager', number: '1' }] }).expect(400)).body.details[0].field).toBe('phones.0.type');
    expect((await post('adminA', { name: 'x', phones: [{ type: 'work', number: 'call me' }] }).expect(400)).body.details[0].field).toBe('phones.0.number');
    await post('adminA', { name: 'x', phones: Array.from({ length: 11 }, () => ({ type: 'work', number: '1' })) }).expect(400);
    await post('adminA', { name: 'x', notes: 'n'.repeat(10_000) }).expect(201);
    await post('adminA', { name: 'x', notes: 'n'.repeat(10_001) }).expect(400);
    expect((await post('adminA', { name: 'x', color: 'red' }).expect(400)).body.code).toBe('validation_failed');
    expect((await request(t.http).get('/api/v1/contacts/nope').set('Authorization', auth.adminA).expect(400)).body.code).toBe('invalid_id');
  });

  it('answers a contact byte for byte the same on create, read and update, lists by name without regard to case, and counts past the last page', async () => {
    const created = await post('adminA', { name: 'byte exact', phones: [{ number: '555 0100', type: 'mobile' }], externalId: 'bytes-1' }).expect(201);
    const read = await request(t.http).get(`/api/v1/contacts/${created.body.contact.id}`).set('Authorization', auth.adminA).expect(200);
    expect(read.text).toBe(created.text);
    const updated = await request(t.http).patch(`/api/v1/contacts/${created.body.contact.id}`).set('Authorization', auth.adminA).send({ title: 'Byte keeper' }).expect(200);
    expect((await request(t.http).get(`/api/v1/contacts/${created.body.contact.id}`).set('Authorization', auth.adminA).expect(200)).text).toBe(updated.text);

    await post('adminA', { name: 'Byte Second', title: 'Byte keeper' }).expect(201);
    const listed = await request(t.http).get('/api/v1/contacts').query({ q: 'byte keeper' }).set('Authorization', auth.adminA).expect(200);
    expect(listed.body.contacts.map((c: { name: string }) => c.name)).toEqual(['byte exact', 'Byte Second']);
    expect(listed.body.contacts[0]).toEqual(updated.body.contact);
    const past = await request(t.http).get('/api/v1/contacts').query({ q: 'byte keeper', page: 5, limit: 1 }).set('Authorization', auth.adminA).expect(200);
    expect(past.body).toEqual({ success: true, contacts: [], pagination: { page: 5, limit: 1, total: 2 } });
  });
});
