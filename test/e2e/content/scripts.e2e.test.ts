import { createHash } from 'node:crypto';
import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

describe('scripts: parameters, run-as, exit-code severity mapping, partner-wide availability', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const auth: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    for (const who of ['adminA', 'adminB', 'tech', 'siteA1User']) auth[who] = `Bearer ${await t.token(ids[who], { mfa: true })}`;
    auth.readerA = `Bearer ${await t.token(ids.readerA)}`;
    auth.adminANoMfa = `Bearer ${await t.token(ids.adminA)}`;
  });
  afterAll(() => t.close());

  const create = (who: string, body: object) => request(t.http).post('/api/v1/scripts').set('Authorization', auth[who]).send(body);
  const base = { name: 'Clear temp', language: 'powershell', body: 'Remove-Item $env:TEMP\\* -Recurse' };

  it('creates an organization script with defaults, parameters and a severity mapping', async () => {
    const res = await create('adminA', {
      ...base,
      parameters: [{ name: 'Days', type: 'number', default: 7, description: 'age in days' }, { name: 'Token', type: 'secret', required: true }],
      exitCodeSeverityMapping: [{ exitCode: 0, severity: 'success' }, { from: 1, to: 9, severity: 'warning' }, { exitCode: 3221225477, severity: 'critical' }],
    }).expect(201);
    expect(res.body.script).toMatchObject({
      availability: 'organization',
      orgId: ids.orgA,
      category: 'General',
      runAs: 'system',
      timeoutSeconds: 300,
      parameters: [{ name: 'Days', type: 'number', required: false, default: 7, description: 'age in days' }, { name: 'Token', type: 'secret', required: true }],
      exitCodeSeverityMapping: [{ exitCode: 0, severity: 'success' }, { from: 1, to: 9, severity: 'warning' }, { exitCode: 3221225477, severity: 'critical' }],
      body: base.body,
    });
    const [audit] = await ownerQuery<{ details: { bodySha256: string } }>(`SELECT details FROM audit_logs WHERE action = 'script.create' AND resource_id = $1`, [res.body.script.id]);
    expect(audit.details.bodySha256).toBe(createHash('sha256').update(base.body).digest('hex'));
    const list = await request(t.http).get('/api/v1/scripts').set('Authorization', auth.adminA).expect(200);
    expect(list.body.scripts[0]).not.toHaveProperty('body');
    expect(list.body.pagination.total).toBe(1);
  });

  it('requires MFA and the scripts permissions', async () => {
    const noMfa = await create('adminANoMfa', { ...base, name: 'No MFA' }).expect(403);
    expect(noMfa.body.code).toBe('mfa_required');
    await request(t.http).get('/api/v1/scripts').set('Authorization', auth.readerA).expect(403);
  });

  it('makes a partner script available to every organization but changeable only by the partner', async () => {
    const s = (await create('tech', { ...base, name: 'Partner cleanup', availability: 'partner', category: 'Maintenance', runAs: 'user' }).expect(201)).body.script;
    expect(s).toMatchObject({ availability: 'partner', partnerId: ids.partner, orgId: null, runAs: 'user' });
    const forB = await request(t.http).get('/api/v1/scripts').query({ availability: 'partner' }).set('Authorization', auth.adminB).expect(200);
    expect(forB.body.scripts.map((x: { id: string }) => x.id)).toEqual([s.id]);
    await request(t.http).get(`/api/v1/scripts/${s.id}`).set('Authorization', auth.adminB).expect(200);
    const denied = await request(t.http).patch(`/api/v1/scripts/${s.id}`).set('Authorization', auth.adminB).send({ name: 'mine' }).expect(403);
    expect(denied.body.code).toBe('partner_scope_required');
    expect((await create('adminA', { ...base, name: 'x', availability: 'partner' }).expect(403)).body.code).toBe('partner_scope_required');
    const forA = await request(t.http).get('/api/v1/scripts').query({ orgId: ids.orgA, category: 'maintenance' }).set('Authorization', auth.tech).expect(200);
    expect(forA.body.scripts.map((x: { name: string }) => x.name)).toEqual(['Partner cleanup']);
  });

  it('hides another organization\'s scripts', async () => {
    const a = (await request(t.http).get('/api/v1/scripts').query({ availability: 'organization' }).set('Authorization', auth.adminA).expect(200)).body.scripts[0];
    await request(t.http).get(`/api/v1/scripts/${a.id}`).set('Authorization', auth.adminB).expect(404);
    await request(t.http).delete(`/api/v1/scripts/${a.id}`).set('Authorization', auth.adminB).expect(404);
  });

  it('validates the exit-code severity mapping and names the offending entry', async () => {
    const overlap = await create('adminA', { ...base, name: 'm1', exitCodeSeverityMapping: [{ from: 1, to: 10, severity: 'warning' }, { exitCode: 5, severity: 'error' }] }).expect(400);
    expect(overlap.body.details).toEqual([{ field: 'exitCodeSeverityMapping.1', message: expect.stringContaining('overlap') }]);
    const severity = await create('adminA', { ...base, name: 'm2', exitCodeSeverityMapping: [{ exitCode: 1, severity: 'fatal' }] }).expect(400);
    expect(severity.body.details[0].field).toBe('exitCodeSeverityMapping.0.severity');
    const big = await create('adminA', { ...base, name: 'm3', exitCodeSeverityMapping: [{ exitCode: 4294967296, severity: 'error' }] }).expect(400);
    expect(big.body.details[0].field).toBe('exitCodeSeverityMapping.0.exitCode');
    const both = await create('adminA', { ...base, name: 'm4', exitCodeSeverityMapping: [{ exitCode: 1, from: 1, to: 2, severity: 'error' }] }).expect(400);
    expect(both.body.details[0].field).toBe('exitCodeSeverityMapping.0');
    const inverted = await create('adminA', { ...base, name: 'm5', exitCodeSeverityMapping: [{ from: 9, to: 1, severity: 'error' }] }).expect(400);
    expect(inverted.body.details[0].field).toBe('exitCodeSeverityMapping.0.from');
    await create('adminA', { ...base, name: 'm6', exitCodeSeverityMapping: [{ exitCode: -2147483648, severity: 'error' }, { exitCode: 4294967295, severity: 'error' }] }).expect(201);
  });

  it('validates parameters, language, run-as and sizes at their limits', async () => {
    const def = await create('adminA', { ...base, name: 'p1', parameters: [{ name: 'n', type: 'number', default: 'seven' }] }).expect(400);
    expect(def.body.details[0].field).toBe('parameters.0.default');
    const dup = await create('adminA', { ...base, name: 'p2', parameters: [{ name: 'x', type: 'string' }, { name: 'X', type: 'string' }] }).expect(400);
    expect(dup.body.details[0].field).toBe('parameters.1.name');
    expect((await create('adminA', { ...base, name: 'p3', language: 'cobol' }).expect(400)).body.details[0].field).toBe('language');
    expect((await create('adminA', { ...base, name: 'p4', runAs: 'root' }).expect(400)).body.details[0].field).toBe('runAs');
    await create('adminA', { ...base, name: 'p5', body: 'x'.repeat(262_144) }).expect(201);
    await create('adminA', { ...base, name: 'p6', body: 'x'.repeat(262_145) }).expect(400);
    await create('adminA', { ...base, name: 'p7', timeoutSeconds: 86_401 }).expect(400);
  });

  it('updates a script, keeping names unique per owner regardless of case', async () => {
    const s = (await create('adminA', { ...base, name: 'Editable' }).expect(201)).body.script;
    const res = await request(t.http)
      .patch(`/api/v1/scripts/${s.id}`)
      .set('Authorization', auth.adminA)
      .send({ body: 'Write-Output 2', exitCodeSeverityMapping: [{ exitCode: 2, severity: 'info' }], runAs: 'user' })
      .expect(200);
    expect(res.body.script).toMatchObject({ body: 'Write-Output 2', runAs: 'user', exitCodeSeverityMapping: [{ exitCode: 2, severity: 'info' }], name: 'Editable' });
    const taken = await request(t.http).patch(`/api/v1/scripts/${s.id}`).set('Authorization', auth.adminA).send({ name: 'CLEAR TEMP' }).expect(409);
    expect(taken.body.code).toBe('name_taken');
    await request(t.http).patch(`/api/v1/scripts/${s.id}`).set('Authorization', auth.adminA).send({ exitCodeSeverityMapping: [{ exitCode: 1, severity: 'x' }] }).expect(400);
  });

  it('keeps organization scripts away from site-restricted users\' writes', async () => {
    expect((await create('siteA1User', { ...base, name: 'site script' }).expect(403)).body.code).toBe('site_access_denied');
    await request(t.http).get('/api/v1/scripts').set('Authorization', auth.siteA1User).expect(200);
  });

  it('deletes a script', async () => {
    const s = (await create('adminA', { ...base, name: 'Doomed' }).expect(201)).body.script;
    await request(t.http).delete(`/api/v1/scripts/${s.id}`).set('Authorization', auth.adminA).expect(200);
    await request(t.http).get(`/api/v1/scripts/${s.id}`).set('Authorization', auth.adminA).expect(404);
  });

  it('answers a script byte for byte the same on create, read and update, and lists summaries in category and name order with the total', async () => {
    const body = {
      ...base,
      name: 'Byte exact',
      category: 'zeta',
      parameters: [{ type: 'string', name: 'Path', description: 'where', required: true }],
      exitCodeSeverityMapping: [{ severity: 'warning', to: 9, from: 1 }],
    };
    const created = await create('adminA', body).expect(201);
    const read = await request(t.http).get(`/api/v1/scripts/${created.body.script.id}`).set('Authorization', auth.adminA).expect(200);
    expect(read.text).toBe(created.text);
    const updated = await request(t.http).patch(`/api/v1/scripts/${created.body.script.id}`).set('Authorization', auth.adminA).send({ description: 'changed' }).expect(200);
    const reread = await request(t.http).get(`/api/v1/scripts/${created.body.script.id}`).set('Authorization', auth.adminA).expect(200);
    expect(reread.text).toBe(updated.text);

    await create('adminA', { ...base, name: 'alpha first', category: 'Zeta' }).expect(201);
    const list = await request(t.http).get('/api/v1/scripts?category=ZETA&limit=1&page=2').set('Authorization', auth.adminA).expect(200);
    expect(list.body.pagination).toEqual({ page: 2, limit: 1, total: 2 });
    const { body: _body, ...summary } = reread.body.script;
    expect(list.body.scripts).toEqual([summary]);
    const escaped = await request(t.http).get('/api/v1/scripts?q=%25').set('Authorization', auth.adminA).expect(200);
    expect(escaped.body.pagination.total).toBe(0);
  });

  it('counts the scripts on a page past the last, as contacts and devices do', async () => {
    for (const name of ['Past one', 'Past two']) await create('adminA', { ...base, name, category: 'Past the end' }).expect(201);
    const past = await request(t.http).get('/api/v1/scripts').query({ category: 'past the end', page: 5, limit: 1 }).set('Authorization', auth.adminA).expect(200);
    expect(past.body).toEqual({ success: true, scripts: [], pagination: { page: 5, limit: 1, total: 2 } });
    const none = await request(t.http).get('/api/v1/scripts').query({ category: 'no such category', page: 2, limit: 1 }).set('Authorization', auth.adminA).expect(200);
    expect(none.body.pagination).toEqual({ page: 2, limit: 1, total: 0 });
  });
});
