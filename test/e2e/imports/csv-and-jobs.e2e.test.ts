import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { ImportPlan, phaseSizes, planFromInterchange } from '../../../src/modules/imports/document/import-plan';
import type { InterchangeDocument } from '../../../src/modules/imports/document/interchange.types';
import { emptyReport } from '../../../src/modules/imports/import-report';
import { ImportJob } from '../../../src/modules/imports/import.job';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { find, runImport, waitForImport } from './import-helpers';

describe('CSV imports, permissions, and import jobs that resume or fail', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const auth: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    for (const who of ['adminA', 'adminB', 'tech', 'techA', 'siteA1User']) auth[who] = `Bearer ${await t.token(ids[who], { mfa: true })}`;
    auth.readerA = `Bearer ${await t.token(ids.readerA)}`;
    auth.adminANoMfa = `Bearer ${await t.token(ids.adminA)}`;
    const field = (body: object) => request(t.http).post('/api/v1/custom-fields').set('Authorization', auth.adminA).send(body).expect(201);
    await field({ key: 'asset_tag', name: 'Asset tag', type: 'text' });
    await field({ key: 'cores', name: 'Cores', type: 'number', validation: { integer: true } });
    await field({ key: 'roles', name: 'Roles', type: 'multi_select', options: ['web', 'db', 'dns'] });
    await ownerQuery(`INSERT INTO devices (org_id, site_id, hostname) VALUES ($1, $2, 'DUP-HOST'), ($1, $3, 'dup-host')`, [ids.orgA, ids.siteA1, ids.siteA2]);
  });
  afterAll(() => t.close());

  const contactsCsv = [
    'externalId,name,email,phone,mobile,title,notes,site',
    'c-1,"Lee, Ann",ann@a.example,+1 555 0100,,CTO,"said ""call me""",A1',
    'c-2,Bob Stone,,,+1 555 0101,,,',
    'c-3,Cleo Nowhere,cleo@a.example,,,,,Nowhere',
  ].join('\r\n');

  it('imports contacts from CSV into the caller\'s organization, pinning them to sites by name', async () => {
    const res = await runImport(t, auth.adminA, contactsCsv, { type: 'contacts' });
    expect(res).toMatchObject({ status: 'completed', percent: 100 });
    expect(res.report.created.map((i) => i.ref)).toEqual(['line 2', 'line 3']);
    expect(find(res.report.unresolved, 'line 4')).toMatchObject({ reason: 'the organization has no site named "Nowhere"' });
    const [ann] = await ownerQuery<{ name: string; site_id: string; phones: object; notes: string }>(`SELECT name, site_id, phones, notes FROM contacts WHERE org_id = $1 AND external_id = 'c-1'`, [ids.orgA]);
    expect(ann).toEqual({ name: 'Lee, Ann', site_id: ids.siteA1, phones: [{ type: 'work', number: '+1 555 0100' }], notes: 'said "call me"' });
    const again = await runImport(t, auth.adminA, contactsCsv, { type: 'contacts' });
    expect(again.report.summary).toMatchObject({ created: 0, updated: 0, unchanged: 2, unresolved: 1 });
  });

  it('answers 202 with the queued job, then shows its progress and, once it ends, its report', async () => {
    const res = await request(t.http).post('/api/v1/imports').query({ type: 'contacts', dryRun: 'true' }).set('Authorization', auth.adminA).set('Content-Type', 'text/csv').send(contactsCsv).expect(202);
    expect(res.body.import).toMatchObject({ status: 'queued', dryRun: true, format: 'contacts_csv', orgId: ids.orgA, percent: 0, processedItems: 0, totalItems: 3, report: null });
    expect(res.body.import.phases).toEqual([{ name: 'contacts', status: 'not_run', counts: { created: 0, updated: 0, unchanged: 0, heldBack: 0, unresolved: 0 }, durationMs: null }]);
    const done = await waitForImport(t, auth.adminA, res.body.import.id);
    expect(done).toMatchObject({ status: 'completed', percent: 100, phase: null });
    expect(done.report.summary).toEqual({ created: 0, updated: 0, unchanged: 2, heldBack: 0, unresolved: 1 });
  });

  it('rejects malformed CSV with the line and column of the first problem', async () => {
    const post = (csv: string, query: object = { type: 'contacts' }) => request(t.http).post('/api/v1/imports').query(query).set('Authorization', auth.adminA).set('Content-Type', 'text/csv').send(csv);
    expect((await post('externalId,name\nx,Ok\ny,Fine,extra\n').expect(400)).body.details[0]).toEqual({ field: 'line 3', message: 'expected 2 fields, found 3' });
    expect((await post('externalId,name,email\nx,Ok,not-an-email\n').expect(400)).body.details[0]).toEqual({ field: 'line 2.email', message: 'must be an email address' });
    expect((await post('externalId,email\nx,a@b.example\n').expect(400)).body.details[0].field).toBe('line 1');
    expect((await post('externalId,name,shoe_size\nx,Ok,42\n').expect(400)).body.details[0].field).toBe('line 1.shoe_size');
    expect((await post('externalId,name\nx,A\nx,B\n').expect(400)).body.details[0]).toEqual({ field: 'line 3.externalId', message: 'duplicates line 2' });
    expect((await post('externalId,name\n"x,A\n').expect(400)).body.details[0].field).toBe('line 2');
    expect((await post('externalId,name\nx,A\n', {}).expect(400)).body.details[0].field).toBe('type');
    const plain = await request(t.http).post('/api/v1/imports').set('Authorization', auth.adminA).set('Content-Type', 'text/plain').send('hello').expect(415);
    expect(plain.body.code).toBe('unsupported_media_type');
    const charset = await request(t.http).post('/api/v1/imports').query({ type: 'contacts' }).set('Authorization', auth.adminA).set('Content-Type', 'text/csv; charset=x-unknown').send('a,b\n').expect(415);
    expect(charset.body).toMatchObject({ success: false, code: 'unsupported_media_type', requestId: expect.any(String) });
  });

  it('imports custom-field values from CSV, reporting rows that match no device or several', async () => {
    const csv = ['deviceId,hostname,field,value'];
    const host = (await ownerQuery<{ hostname: string }>(`SELECT hostname FROM devices WHERE id = $1`, [ids.deviceA1]))[0].hostname;
    csv.push(`,${host.toLowerCase()},asset_tag,TAG-1`, `,${host},cores, 8 `, `,${host},roles,dns;web`, ',dup-host,asset_tag,TAG-2', ',no-such-host,asset_tag,TAG-3', 'src-9,,asset_tag,TAG-4', `,${host},shoe_size,42`, `,${host},cores,8.5`);
    const res = await runImport(t, auth.adminA, csv.join('\n'), { type: 'custom-field-values' });
    expect(res.report.created.map((i) => i.ref).sort()).toEqual(['line 2', 'line 3', 'line 4']);
    expect(Object.fromEntries(res.report.unresolved.map((i) => [i.ref, i.reason]))).toEqual({
      'line 5': '2 devices of the organization have hostname dup-host',
      'line 6': 'no device of the organization has hostname no-such-host',
      'line 7': 'no device was imported with source device id src-9',
      'line 8': 'no custom field with key shoe_size applies to the organization',
      'line 9': 'invalid value: value must be an integer',
    });
    const values = await request(t.http).get(`/api/v1/devices/${ids.deviceA1}/custom-fields`).set('Authorization', auth.adminA).expect(200);
    expect(values.body.values.map((v: { key: string; value: unknown }) => [v.key, v.value])).toEqual([['asset_tag', 'TAG-1'], ['cores', 8], ['roles', ['web', 'dns']]]);
    const changed = await runImport(t, auth.adminA, `hostname,field,value\n${host},asset_tag,TAG-NEW\n`, { type: 'custom-field-values' });
    expect(find(changed.report.unchanged, 'line 2')).toMatchObject({ reason: 'the device already has another value; kept (overwrite is off)' });
    const forced = await runImport(t, auth.adminA, `hostname,field,value\n${host},asset_tag,TAG-NEW\n`, { type: 'custom-field-values', overwrite: true });
    expect(find(forced.report.updated, 'line 2')).toBeDefined();
  });

  it('needs imports:write, MFA, partner scope and full reach for documents, and site-wide access for CSV', async () => {
    const doc = { format: 'rmm-interchange', version: 1, source: { system: 'x' }, customers: [] };
    const post = (who: string, body: object | string, query: object = {}, type = 'application/json') =>
      request(t.http).post('/api/v1/imports').query(query).set('Authorization', auth[who]).set('Content-Type', type).send(body);
    expect((await post('readerA', doc).expect(403)).body).toMatchObject({ code: 'forbidden', permission: 'imports:write' });
    expect((await post('adminANoMfa', doc).expect(403)).body.code).toBe('mfa_required');
    expect((await post('adminA', doc).expect(403)).body.code).toBe('partner_scope_required');
    expect((await post('techA', doc).expect(403)).body.code).toBe('forbidden');
    expect((await post('siteA1User', contactsCsv, { type: 'contacts' }, 'text/csv').expect(403)).body.code).toBe('site_access_denied');
    expect((await post('tech', contactsCsv, { type: 'contacts' }, 'text/csv').expect(400)).body.details[0].field).toBe('orgId');
    expect((await post('adminB', contactsCsv, { type: 'contacts', orgId: ids.orgA }, 'text/csv').expect(404)).body.code).toBe('not_found');
    expect((await post('tech', doc, { type: 'contacts' }).expect(400)).body.details[0].field).toBe('type');
    const mine = await runImport(t, auth.adminA, contactsCsv, { type: 'contacts', dryRun: true });
    await request(t.http).get(`/api/v1/imports/${mine.id}`).set('Authorization', auth.adminB).expect(404);
    const list = await request(t.http).get('/api/v1/imports').set('Authorization', auth.adminB).expect(200);
    expect(list.body.imports).toEqual([]);
    const forTech = await request(t.http).get('/api/v1/imports').query({ limit: 2 }).set('Authorization', auth.tech).expect(200);
    expect(forTech.body.pagination).toMatchObject({ limit: 2, total: expect.any(Number) });
    expect(forTech.body.imports[0].id).toBe(mine.id);
  });

  const smallDoc = (name: string, devices: { externalId: string; hostname: string }[]): InterchangeDocument => ({
    format: 'rmm-interchange',
    version: 1,
    source: { system: 'jobs-test' },
    customers: [{ externalId: `cust-${name}`, name, devices, contacts: [{ externalId: 'p-1', name: 'Pat Doe' }] }],
  });

  async function insertJob(plan: ImportPlan, extra: Record<string, unknown>): Promise<string> {
    const sizes = phaseSizes(plan);
    const cols = {
      partner_id: ids.partner,
      format: plan.format,
      dry_run: false,
      overwrite: false,
      phases: plan.phases,
      total_items: plan.phases.reduce((n, p) => n + sizes[p], 0),
      plan: JSON.stringify(plan),
      report: JSON.stringify(emptyReport(plan.phases, { dryRun: false, overwrite: false })),
      actor_type: 'user',
      actor_id: ids.tech,
      scope: JSON.stringify({ scope: 'partner', orgIds: [ids.orgA, ids.orgB], partnerIds: [ids.partner], userId: ids.tech }),
      ...extra,
    };
    const keys = Object.keys(cols);
    const [row] = await ownerQuery<{ id: string }>(`INSERT INTO imports (${keys.join(', ')}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`, Object.values(cols));
    return row.id;
  }

  it('resumes a job whose instance died, from the first phase it had not committed', async () => {
    const plan = planFromInterchange(smallDoc('Resumed Co', [{ externalId: 'r-1', hostname: 'R-1' }]));
    // The dead instance had committed the organizations and custom-fields phases.
    const [org] = await ownerQuery<{ id: string }>(`INSERT INTO organizations (partner_id, name) VALUES ($1, 'Resumed Co') RETURNING id`, [ids.partner]);
    await ownerQuery(`INSERT INTO sites (org_id, name) VALUES ($1, 'Main')`, [org.id]);
    await ownerQuery(`INSERT INTO import_links (partner_id, source_system, kind, external_id, org_id, local_id) VALUES ($1, 'jobs-test', 'customer', 'cust-Resumed Co', $2, $2)`, [ids.partner, org.id]);
    const stale = await insertJob(plan, { status: 'running', attempts: 1, phases_completed: 2, started_at: new Date(Date.now() - 600_000), heartbeat_at: new Date(Date.now() - 600_000) });
    const alive = await insertJob(plan, { status: 'running', attempts: 1, heartbeat_at: new Date() });
    expect(await t.app.get(ImportJob).resumeUnfinished()).toBeGreaterThanOrEqual(1);
    const done = await waitForImport(t, auth.tech, stale);
    expect(done).toMatchObject({ status: 'completed', percent: 100 });
    expect(done.report.phases.map((p) => p.status)).toEqual(['not_run', 'not_run', 'completed', 'completed', 'completed', 'completed', 'completed', 'completed']);
    expect(done.report.created.map((i) => i.kind)).toEqual(['device', 'contact']);
    expect(await ownerQuery(`SELECT hostname FROM devices WHERE org_id = $1`, [org.id])).toEqual([{ hostname: 'R-1' }]);
    const [untouched] = await ownerQuery<{ status: string; attempts: number }>(`SELECT status, attempts FROM imports WHERE id = $1`, [alive]);
    expect(untouched).toEqual({ status: 'running', attempts: 1 });
    const [audit] = await ownerQuery<{ actor_type: string; actor_id: string }>(`SELECT actor_type, actor_id FROM audit_logs WHERE action = 'import.complete' AND resource_id = $1`, [stale]);
    expect(audit).toEqual({ actor_type: 'user', actor_id: ids.tech });
  });

  it('gives up on a job that keeps dying', async () => {
    const plan = planFromInterchange(smallDoc('Cursed Co', []));
    const id = await insertJob(plan, { status: 'running', attempts: 3, heartbeat_at: new Date(Date.now() - 600_000) });
    await t.app.get(ImportJob).process(id);
    const [row] = await ownerQuery<{ status: string; error: { message: string } }>(`SELECT status, error FROM imports WHERE id = $1`, [id]);
    // The phase it would have run next: the one its instance died in.
    expect(row).toEqual({ status: 'failed', error: { phase: 'organizations', message: 'gave up after 3 attempts' } });
  });

  it('rolls back a failing phase entirely and keeps the phases before it', async () => {
    // Built past the validator: a hostname the database refuses fails the devices phase.
    const plan = planFromInterchange(smallDoc('Half Done Co', [{ externalId: 'ok-1', hostname: 'FINE-1' }, { externalId: 'bad-1', hostname: 'x'.repeat(300) }]));
    const id = await insertJob(plan, { status: 'queued', id: randomUUID() });
    await t.app.get(ImportJob).process(id);
    const job = await waitForImport(t, auth.tech, id);
    expect(job.status).toBe('failed');
    expect(job.error).toEqual({ phase: 'devices', message: 'the phase failed unexpectedly and was rolled back; nothing of it was written' });
    expect(job.report.phases.map((p) => p.status)).toEqual(['completed', 'completed', 'failed', 'not_run', 'not_run', 'not_run', 'not_run', 'not_run']);
    const [org] = await ownerQuery<{ id: string }>(`SELECT id FROM organizations WHERE partner_id = $1 AND name = 'Half Done Co'`, [ids.partner]);
    expect(await ownerQuery(`SELECT hostname FROM devices WHERE org_id = $1`, [org.id])).toEqual([]);
    expect(await ownerQuery(`SELECT 1 FROM contacts WHERE org_id = $1`, [org.id])).toEqual([]);
  });
});
