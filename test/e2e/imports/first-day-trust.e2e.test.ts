import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { find, partnerDigest, runImport } from './import-helpers';

const LARGE = 'application/vnd.rmm-import+json';
const doc = (system: string, customers: object[], extra: object = {}) => ({ format: 'rmm-interchange', version: 1, source: { system }, customers, ...extra });
const script = (externalId: string, name: string, more: object = {}) => ({ externalId, name, language: 'bash', body: 'true', ...more });

/** Issue 30: what an MSP's first import must get right, each item as the issue found it. */
describe('an import an MSP can trust on its first day', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let auth: string;
  let adminA: string;
  // Bytes go out as they are (superagent would turn a Buffer sent as JSON into {"type":"Buffer",…}).
  const post = (body: string | object, type = 'application/json', query: object = {}, who?: string) =>
    request(t.http).post('/api/v1/imports').query(query).set('Authorization', who ?? auth).set('Content-Type', type).serialize((b: unknown) => (Buffer.isBuffer(b) || typeof b === 'string' ? b : JSON.stringify(b)) as string).send(body);
  const importCount = async () => (await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM imports WHERE partner_id = $1`, [ids.partner]))[0].n;

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    auth = `Bearer ${await t.token(ids.tech, { mfa: true })}`;
    adminA = `Bearer ${await t.token(ids.adminA, { mfa: true })}`;
  });
  afterAll(() => t.close());

  it('refuses a document whose names differ only in case, naming each collision, and records nothing', async () => {
    const before = await importCount();
    const body = doc(
      'case-collisions',
      [
        {
          externalId: 'c1',
          name: 'Collision Co',
          locations: [{ externalId: 'l1', name: 'HQ' }, { externalId: 'l2', name: 'hq' }],
          deviceGroups: [
            { externalId: 'g1', name: 'Servers', filter: { field: 'osType', op: 'eq', value: 'linux' } },
            { externalId: 'g2', name: 'Servers', filter: { field: 'osType', op: 'eq', value: 'windows' } },
          ],
        },
      ],
      { scripts: [script('s1', 'Collide cleanup'), script('s2', 'COLLIDE CLEANUP')] },
    );
    const res = await post(body).expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'validation_failed' });
    expect(res.body.details).toEqual([
      { field: 'scripts[1].name', message: 'differs only in case from scripts[0] ("Collide cleanup"): scripts of one owner need names that differ in more than case' },
      { field: 'customers[0].locations[1].name', message: 'differs only in case from customers[0].locations[0] ("HQ"): locations of one owner need names that differ in more than case' },
      { field: 'customers[0].deviceGroups[1].name', message: 'has the same name as customers[0].deviceGroups[0] ("Servers"): device groups of one owner need names that differ in more than case' },
    ]);
    expect(await importCount()).toBe(before);
  });

  it('still merges the same script spelt exactly alike in two locations, and a re-import of it changes nothing', async () => {
    const body = doc('exact-merge', [
      {
        externalId: 'm1',
        name: 'Exact Merge Co',
        locations: [
          { externalId: 'l1', name: 'North', scripts: [script('n-clean', 'Disk cleanup')] },
          { externalId: 'l2', name: 'South', scripts: [script('s-clean', 'Disk cleanup', { body: 'true # south' })] },
        ],
      },
    ]);
    const first = await runImport(t, auth, body);
    expect(find(first.report.created, 'customers[0].locations[1].scripts[0]')).toMatchObject({ mergedFrom: ['customers[0].locations[0].scripts[0]'] });
    const digest = await partnerDigest(ids.partner);
    const again = await runImport(t, auth, body);
    expect(again.report.summary).toMatchObject({ created: 0, updated: 0 });
    expect(await partnerDigest(ids.partner)).toEqual(digest);
  });

  it('names every problem of a document at once: shape, duplicates and references together', async () => {
    const body = doc('all-at-once', [
      {
        externalId: 'a1',
        name: 'x'.repeat(300),
        customFields: [{ key: 'tier', name: 'Tier', type: 'text' }, { key: 'tier', name: 'Tier again', type: 'text' }],
        locations: [{ externalId: 'l1', name: 'L1' }],
        devices: [{ externalId: 'd1', hostname: 'D1' }, { externalId: 'd1', hostname: 'D2' }, { externalId: 'd3', hostname: 'D3', locationExternalId: 'nowhere' }],
      },
    ]);
    const res = await post(body).expect(400);
    expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(
      ['customers[0].customFields[1].key', 'customers[0].devices[1].externalId', 'customers[0].devices[2].locationExternalId', 'customers[0].name'].sort(),
    );
  });

  it('names every bad row of a CSV file, up to 20, in line order', async () => {
    const csv = ['externalId,name,email', 'ok-1,Fine,', 'bad-1,No Mail,not-an-email', 'bad-2,,', 'ok-2,Fine Too,', 'bad-3,Ragged', 'ok-1,Twice,'].join('\n');
    const res = await post(csv, 'text/csv', { type: 'contacts' }, adminA).expect(400);
    expect(res.body.details).toEqual([
      { field: 'line 3.email', message: 'must be an email address' },
      { field: 'line 4.name', message: 'must be at least 1 characters' },
      { field: 'line 6', message: 'expected 3 fields, found 2' },
      { field: 'line 7.externalId', message: 'duplicates line 2' },
    ]);
    const many = ['externalId,name,email', ...Array.from({ length: 30 }, (_, i) => `x-${i},Name,bad`)].join('\n');
    expect((await post(many, 'text/csv', { type: 'contacts' }, adminA).expect(400)).body.details).toHaveLength(20);
  });

  it('refuses a Latin-1 CSV or JSON body with 400 naming the line, and a declared charset other than UTF-8 with 415', async () => {
    const before = await importCount();
    const csv = Buffer.from('externalId,name\nx-1,Ann\nx-2,Jos\xe9 M\xfcller\n', 'latin1');
    const res = await post(csv, 'text/csv', { type: 'contacts' }, adminA).expect(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'line 3', message: expect.stringContaining('byte 0xE9 at column 8 is not UTF-8') }] });
    const json = Buffer.from(JSON.stringify(doc('latin1', [{ externalId: 'c', name: 'Caf\u00e9' }]), null, 1), 'latin1');
    for (const type of ['application/json', LARGE]) {
      const bad = await post(json, type).expect(400);
      expect(bad.body.details).toEqual([{ field: 'line 10', message: expect.stringContaining('byte 0xE9') }]);
    }
    const declared = await post(csv, 'text/csv; charset=iso-8859-1', { type: 'contacts' }, adminA).expect(415);
    expect(declared.body).toMatchObject({ success: false, code: 'unsupported_media_type' });
    expect(await importCount()).toBe(before);
    // The same text as UTF-8 (with the byte-order mark some tools write) is stored as written.
    const utf8 = await runImport(t, adminA, `\ufeffexternalId,name\nx-1,Ann\nx-2,Jos\u00e9 M\u00fcller\n`, { type: 'contacts' });
    expect(utf8.status).toBe('completed');
    expect(await ownerQuery(`SELECT name FROM contacts WHERE org_id = $1 AND external_id = 'x-2'`, [ids.orgA])).toEqual([{ name: 'Jos\u00e9 M\u00fcller' }]);
  });

  it('bounds the members of a large-export body as it does an application/json one', async () => {
    const wide = JSON.stringify(doc('wide', [{ externalId: 'w', name: 'W', devices: [] }], { padding: Array.from({ length: 4_000_001 }, () => 0) }));
    const res = await post(wide, LARGE).expect(400);
    expect(res.body.details).toEqual([{ field: 'body', message: 'The body has more than 4000000 members (object keys and array items)' }]);
    const small = JSON.stringify(doc('wide', [], { padding: Array.from({ length: 200_001 }, () => 0) }));
    expect((await post(small, 'application/json').expect(400)).body.details[0].message).toContain('200000 members');
  });

  it('reports changed fields with the document\'s names', async () => {
    const body = doc('field-names', [{ externalId: 'f', name: 'Field Names Co', scripts: [script('s', 'Backup', { timeoutSeconds: 300, runAs: 'system' })] }]);
    await runImport(t, auth, body);
    body.customers[0] = { ...body.customers[0], scripts: [script('s', 'Backup', { timeoutSeconds: 600, runAs: 'user' })] };
    const res = await runImport(t, auth, body);
    expect(find(res.report.updated, 'customers[0].scripts[0]')).toMatchObject({ fields: ['runAs', 'timeoutSeconds'] });
  });

  it('writes each phase its report items once, in a row of their own, and still reports every record in phase order', async () => {
    const done = await runImport(
      t,
      auth,
      doc('bookkeeping', [
        {
          externalId: 'bk',
          name: 'Bookkeeping Co',
          devices: [{ externalId: 'bk-d1', hostname: 'BK-1', osType: 'linux' }, { externalId: 'bk-d2', hostname: 'BK-2', osType: 'windows' }],
          contacts: [{ externalId: 'bk-p1', name: 'Book Keeper', email: 'keeper@bk.example' }],
        },
      ]),
    );
    expect(done.status).toBe('completed');
    // The job row does not grow with the document: no items accumulate in it, and the plan is gone.
    const [row] = await ownerQuery<{ pending: boolean; created: number; plan_dropped: boolean }>(
      `SELECT report ? 'pending' AS pending, jsonb_array_length(report->'created') AS created, plan IS NULL AND plan_gz IS NULL AS plan_dropped FROM imports WHERE id = $1`,
      [done.id],
    );
    expect(row).toEqual({ pending: false, created: 0, plan_dropped: true });
    const stored = await ownerQuery<{ phase: string }>(`SELECT phase FROM import_phase_items WHERE import_id = $1 ORDER BY ordinal`, [done.id]);
    expect(stored.map((r) => r.phase)).toEqual(done.report.phases.map((p) => p.name));
    // The report, read back: every record once, phase by phase.
    expect(done.report.created.map((i) => `${i.kind} ${i.ref}`)).toEqual([
      'organization customers[0]',
      'site customers[0]',
      'device customers[0].devices[0]',
      'device customers[0].devices[1]',
      'contact customers[0].contacts[0]',
    ]);
    expect(done.counts.created).toBe(5);
  });

  it('shows the same pendingMatches in the list as on the import itself', async () => {
    await request(t.http).post('/api/v1/contacts').set('Authorization', adminA).send({ orgId: ids.orgA, name: 'Held Back Person', email: 'held.back@a.example' }).expect(201);
    const held = await runImport(t, adminA, 'externalId,name,email\nhb-1,H. Back,held.back@a.example\n', { type: 'contacts' });
    expect(held.pendingMatches).toBe(1);
    const list = await request(t.http).get('/api/v1/imports').set('Authorization', adminA).expect(200);
    expect(list.body.imports.find((i: { id: string }) => i.id === held.id)).toMatchObject({ pendingMatches: 1 });
  });
});

describe('an import that creates organizations, with the principal cache on', () => {
  let t: TestApp;
  let auth: string;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    const ids = await t.seed(tenantFixture());
    auth = `Bearer ${await t.token(ids.tech, { mfa: true })}`;
  });
  afterAll(() => t.close());

  it('lets the importer see the new organization and import again at once', async () => {
    await request(t.http).get('/api/v1/organizations').set('Authorization', auth).expect(200);
    const done = await runImport(t, auth, doc('cache', [{ externalId: 'new', name: 'Fresh From Import Co' }]));
    expect(done.status).toBe('completed');
    const orgs = await request(t.http).get('/api/v1/organizations').set('Authorization', auth).expect(200);
    expect(orgs.body.organizations.map((o: { name: string }) => o.name)).toContain('Fresh From Import Co');
    await request(t.http).post('/api/v1/imports').set('Authorization', auth).send(doc('cache', [{ externalId: 'new', name: 'Fresh From Import Co' }])).expect(202);
  });
});
