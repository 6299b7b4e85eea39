import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { find, ImportBody, partnerDigest, runImport } from './import-helpers';

const EXPORT = JSON.parse(readFileSync(join(__dirname, '../../fixtures/rmm-export/export.json'), 'utf8'));
const clone = () => JSON.parse(JSON.stringify(EXPORT));
const strip = (r: ImportBody['report']) => ({ ...r, dryRun: undefined });

/**
 * The realistic export (test/fixtures/rmm-export): 5 customers, 10 locations, 200 devices,
 * 500 contacts, location fields that disagree, ambiguous hostnames. The tests run in order
 * and build on each other, like a migration does.
 */
describe('import of a realistic export from another RMM', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let auth: string;
  let contoso: string;
  let first: ImportBody;
  let dry: ImportBody;

  beforeAll(async () => {
    t = await startTestApp();
    ids = await t.seed(tenantFixture());
    auth = `Bearer ${await t.token(ids.tech, { mfa: true })}`;
    // Contoso is already a customer of the partner, with two contacts typed in by hand that the
    // export also holds (one with the same email, one with the same name): fuzzy candidates.
    contoso = (await request(t.http).post('/api/v1/organizations').set('Authorization', auth).send({ name: 'Contoso Ltd' }).expect(201)).body.organization.id;
    const contact = (body: object) => request(t.http).post('/api/v1/contacts').set('Authorization', auth).send({ orgId: contoso, ...body }).expect(201);
    await contact({ name: 'H. Larsen', email: 'HANA.LARSEN1@contoso.example' });
    await contact({ name: 'omar weber 002', title: 'Typed by hand' });
  }, 60_000);
  afterAll(() => t.close());

  it('dry-runs the export without writing anything', async () => {
    const before = await partnerDigest(ids.partner);
    dry = await runImport(t, auth, EXPORT, { dryRun: true });
    expect(dry).toMatchObject({ status: 'completed', percent: 100, error: null });
    expect(dry.report.dryRun).toBe(true);
    expect(dry.report.summary.created).toBeGreaterThan(700);
    expect(await partnerDigest(ids.partner)).toEqual(before);
    expect(await ownerQuery(`SELECT 1 FROM import_matches WHERE import_id = $1`, [dry.id])).toEqual([]);
  });

  it('imports it: customers, locations, devices, contacts, fields, values, groups, scripts and policies', async () => {
    first = await runImport(t, auth, EXPORT);
    expect(first).toMatchObject({ status: 'completed', percent: 100, error: null });
    expect(first.report.phases.map((p) => p.status)).toEqual(Array(8).fill('completed'));
    const orgs = await ownerQuery<{ id: string; name: string }>(`SELECT id, name FROM organizations WHERE partner_id = $1 ORDER BY name`, [ids.partner]);
    expect(orgs.map((o) => o.name)).toEqual(expect.arrayContaining(['Contoso Ltd', 'Fabrikam Inc', 'Northwind Traders', 'Tailspin Toys', 'Wingtip Flat Co']));
    expect(orgs.filter((o) => o.name === 'Contoso Ltd')).toEqual([{ id: contoso, name: 'Contoso Ltd' }]);
    expect(find(first.report.unchanged, 'customers[0]')).toMatchObject({ kind: 'organization', reason: 'matched an existing organization by name' });
    const [counts] = await ownerQuery<Record<string, string>>(
      `SELECT (SELECT count(*) FROM devices d JOIN organizations o ON o.id = d.org_id WHERE o.partner_id = $1) AS devices,
              (SELECT count(*) FROM contacts c JOIN organizations o ON o.id = c.org_id WHERE o.partner_id = $1 AND c.external_id IS NOT NULL) AS contacts,
              (SELECT count(*) FROM sites s JOIN organizations o ON o.id = s.org_id WHERE o.partner_id = $1) AS sites`,
      [ids.partner],
    );
    // 200 devices (orgA and orgB of the fixture hold 3 more); 498 contacts, 2 held back; 10 locations + Main for the flat customer and for Contoso's unplaced devices (+ 3 fixture sites).
    expect(counts).toEqual({ devices: '203', contacts: '498', sites: '15' });
    const flatSites = await ownerQuery<{ name: string }>(`SELECT s.name FROM sites s JOIN organizations o ON o.id = s.org_id WHERE o.name = 'Wingtip Flat Co' AND o.partner_id = $1`, [ids.partner]);
    expect(flatSites).toEqual([{ name: 'Main' }]);
  });

  it('reports a dry run exactly as the real run reported', () => {
    expect(strip(dry.report)).toEqual(strip(first.report));
  });

  it('turns location fields into organization fields, the later location winning, and reports the disagreement', async () => {
    expect(first.report.conflicts).toEqual(
      expect.arrayContaining([
        { kind: 'custom_field', name: 'rack_location', winner: 'customers[0].locations[2].customFields[0]', overridden: ['customers[0].locations[0].customFields[0]'], fields: ['name', 'validation'] },
        { kind: 'custom_field', name: 'network_zone', winner: 'customers[1].locations[1].customFields[0]', overridden: ['customers[1].locations[0].customFields[0]'], fields: ['options'] },
        { kind: 'policy', name: 'configuration|site monitoring', winner: 'customers[1].locations[2].policies[0]', overridden: ['customers[1].locations[1].policies[0]'], fields: ['features'] },
      ]),
    );
    const [rack] = await ownerQuery<{ org_id: string; partner_id: string | null; name: string; validation: object }>(`SELECT org_id, partner_id, name, validation FROM custom_field_definitions WHERE key = 'rack_location' AND org_id = $1`, [contoso]);
    expect(rack).toEqual({ org_id: contoso, partner_id: null, name: 'Rack position', validation: { maxLength: 40 } });
    const partnerWide = await ownerQuery<{ key: string }>(`SELECT key FROM custom_field_definitions WHERE partner_id = $1 ORDER BY key`, [ids.partner]);
    expect(partnerWide.map((r) => r.key)).toEqual(['asset_owner', 'backup_tier', 'warranty_end']);
    // The Fabrikam location policy applies at both locations that defined it.
    const [policy] = await ownerQuery<{ id: string; features: object }>(`SELECT p.id, p.features FROM policies p JOIN organizations o ON o.id = p.org_id WHERE o.name = 'Fabrikam Inc' AND o.partner_id = $1 AND p.name = 'Site monitoring'`, [ids.partner]);
    expect(policy.features).toEqual({ monitoring: { cpuThresholdPercent: 95 } });
    const assigned = await ownerQuery<{ name: string }>(`SELECT s.name FROM policy_assignments a JOIN sites s ON s.id = a.site_id WHERE a.policy_id = $1 ORDER BY s.name`, [policy.id]);
    expect(assigned.map((s) => s.name)).toEqual(['Lab', 'Remote Site']);
  });

  it('reports value rows that resolve to no device or to several, and never guesses', async () => {
    const unresolved = first.report.unresolved.filter((i) => i.kind === 'custom_field_value');
    const reasons = Object.fromEntries(unresolved.map((i) => [i.ref, i.reason]));
    expect(reasons).toEqual({
      'customers[0].customFieldValues[16]': '2 devices of the organization have hostname RECEPTION-PC',
      'customers[0].customFieldValues[62]': '2 devices of the organization have hostname RECEPTION-PC',
      'customers[0].customFieldValues[63]': 'no device of the organization has hostname CON-WS-999',
      'customers[0].customFieldValues[64]': 'no device was imported with source device id con-dev-404',
      'customers[0].customFieldValues[65]': expect.stringMatching(/^invalid value: value must be one of: Gold, Silver, Bronze/),
    });
    const owners = await ownerQuery(`SELECT 1 FROM custom_field_values v JOIN custom_field_definitions d ON d.id = v.definition_id WHERE d.key = 'asset_owner' AND d.partner_id = $1`, [ids.partner]);
    expect(owners).toEqual([]);
    const [zone] = await ownerQuery<{ value: string }>(
      `SELECT v.value FROM custom_field_values v JOIN custom_field_definitions d ON d.id = v.definition_id JOIN import_links l ON l.local_id = v.device_id AND l.kind = 'device'
        WHERE d.key = 'network_zone' AND l.external_id = 'fab-dev-002' AND l.partner_id = $1`,
      [ids.partner],
    );
    expect(zone.value).toBe('Lab');
  });

  it('keeps dynamic group membership and the role policy bound to it', async () => {
    const [group] = await ownerQuery<{ id: string }>(`SELECT id FROM device_groups WHERE org_id = $1 AND name = 'Gold servers' AND kind = 'dynamic'`, [contoso]);
    const members = await ownerQuery<{ hostname: string }>(`SELECT d.hostname FROM device_group_members m JOIN devices d ON d.id = m.device_id WHERE m.group_id = $1 ORDER BY 1`, [group.id]);
    // Servers are the first six devices; the even ones got Gold by hostname.
    expect(members.map((m) => m.hostname)).toEqual(['CON-SRV-001', 'CON-SRV-003', 'CON-SRV-005']);
    const [assignment] = await ownerQuery<{ priority: number; name: string }>(`SELECT a.priority, p.name FROM policy_assignments a JOIN policies p ON p.id = a.policy_id WHERE a.device_group_id = $1`, [group.id]);
    expect(assignment).toEqual({ priority: 10, name: 'Server monitoring' });
    const [patch] = await ownerQuery<{ target_level: string; org_id: string | null }>(`SELECT a.target_level, a.org_id FROM policy_assignments a JOIN policies p ON p.id = a.policy_id WHERE p.partner_id = $1 AND p.name = 'Standard patching'`, [ids.partner]);
    expect(patch).toEqual({ target_level: 'partner', org_id: null });
  });

  it('holds back fuzzy contact matches instead of creating duplicates', async () => {
    const held = first.report.heldBack;
    expect(held.map((h) => [h.ref, h.reason])).toEqual([
      ['customers[0].contacts[0]', 'resembles an existing contact (same email)'],
      ['customers[0].contacts[1]', 'resembles an existing contact (same name)'],
    ]);
    expect(first.pendingMatches).toBe(2);
    const stored = await ownerQuery(`SELECT 1 FROM contacts WHERE external_id IN ('ct-0001', 'ct-0002')`);
    expect(stored).toEqual([]);
  });

  it('changes nothing when the identical export is imported again', async () => {
    const before = await partnerDigest(ids.partner);
    const again = await runImport(t, auth, EXPORT);
    expect(again.status).toBe('completed');
    expect(again.report.summary).toMatchObject({ created: 0, updated: 0, heldBack: 2 });
    expect(again.report.summary.unchanged).toBe(first.report.summary.created + first.report.summary.unchanged + first.report.summary.updated);
    expect(again.report.unresolved).toEqual(first.report.unresolved);
    expect(again.report.heldBack.every((h) => h.reason?.startsWith('still waiting for acknowledgement'))).toBe(true);
    expect(await partnerDigest(ids.partner)).toEqual(before);
    expect((await ownerQuery(`SELECT count(*)::int AS n FROM import_matches WHERE status = 'pending' AND org_id = $1`, [contoso]))[0]).toEqual({ n: 2 });
  });

  it('merges or creates a held-back contact on acknowledgement, once', async () => {
    const matches = (await request(t.http).get(`/api/v1/imports/${first.id}/matches`).set('Authorization', auth).expect(200)).body.matches;
    expect(matches.map((m: { externalId: string; reason: string; status: string }) => [m.externalId, m.reason, m.status])).toEqual([
      ['ct-0001', 'email', 'pending'],
      ['ct-0002', 'name', 'pending'],
    ]);
    const ack = (m: { id: string }, action: string) => request(t.http).post(`/api/v1/imports/${first.id}/matches/${m.id}/acknowledge`).set('Authorization', auth).send({ action });
    const merged = await ack(matches[0], 'merge').expect(200);
    expect(merged.body.match).toMatchObject({ status: 'merged', contactId: matches[0].candidateContactId });
    const [candidate] = await ownerQuery<{ name: string; external_id: string; email: string }>(`SELECT name, external_id, email FROM contacts WHERE id = $1`, [matches[0].candidateContactId]);
    expect(candidate).toEqual({ name: 'Hana Larsen 001', external_id: 'ct-0001', email: 'hana.larsen1@contoso.example' });
    const created = await ack(matches[1], 'create').expect(200);
    expect(created.body.match.contactId).not.toBe(matches[1].candidateContactId);
    const twice = await ack(matches[1], 'merge').expect(409);
    expect(twice.body).toMatchObject({ code: 'match_resolved', currentStatus: 'created' });
    expect((await ack(matches[0], 'bogus').expect(400)).body.code).toBe('validation_failed');
    const after = await runImport(t, auth, EXPORT);
    expect(after.report.summary).toMatchObject({ created: 0, updated: 0, heldBack: 0 });
    expect(find(after.report.unchanged, 'customers[0].contacts[0]')).toBeDefined();
    expect(find(after.report.unchanged, 'customers[0].contacts[1]')).toBeDefined();
  });

  it('applies edits on re-import, leaving existing field values alone unless overwrite is set', async () => {
    const edited = clone();
    const con = edited.customers[0];
    con.contacts[4].title = 'Chief happiness officer';
    con.devices[7].hostname = 'CON-WS-008-NEW';
    con.customFieldValues[0].value = '2030-12-31';
    con.contacts.push({ externalId: 'ct-new-1', name: 'Brand New', email: 'brand.new@contoso.example' });
    const res = await runImport(t, auth, edited);
    expect(res.report.summary).toMatchObject({ created: 1, updated: 2, heldBack: 0 });
    expect(find(res.report.updated, 'customers[0].contacts[4]')).toMatchObject({ fields: ['title'] });
    expect(find(res.report.updated, 'customers[0].devices[7]')).toMatchObject({ fields: ['hostname'] });
    expect(find(res.report.created, 'customers[0].contacts[100]')).toMatchObject({ externalId: 'ct-new-1' });
    expect(find(res.report.unchanged, 'customers[0].customFieldValues[0]')).toMatchObject({ reason: 'the device already has another value; kept (overwrite is off)' });
    const over = await runImport(t, auth, edited, { overwrite: true });
    expect(over.report.summary).toMatchObject({ created: 0, updated: 1 });
    expect(find(over.report.updated, 'customers[0].customFieldValues[0]')).toMatchObject({ fields: ['value'] });
    const [value] = await ownerQuery<{ value: string }>(
      `SELECT v.value FROM custom_field_values v JOIN import_links l ON l.local_id = v.device_id AND l.kind = 'device' JOIN custom_field_definitions d ON d.id = v.definition_id
        WHERE l.external_id = 'con-dev-001' AND l.partner_id = $1 AND d.key = 'warranty_end'`,
      [ids.partner],
    );
    expect(value.value).toBe('2030-12-31');
  });

  it('rejects a malformed document with the path of the first error, importing nothing', async () => {
    const before = await ownerQuery(`SELECT count(*)::int AS n FROM imports WHERE partner_id = $1`, [ids.partner]);
    const bad = clone();
    bad.customers[2].locations[0].name = '';
    bad.customers[3].devices[0].hostname = 7;
    const res = await request(t.http).post('/api/v1/imports').set('Authorization', auth).send(bad).expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'validation_failed' });
    expect(res.body.details[0]).toEqual({ field: 'customers[2].locations[0].name', message: 'must be at least 1 characters' });
    expect(res.body.details[1].field).toBe('customers[3].devices[0].hostname');
    const dangling = clone();
    dangling.customers[1].devices[3].locationExternalId = 'loc-nowhere';
    const ref = await request(t.http).post('/api/v1/imports').set('Authorization', auth).send(dangling).expect(400);
    expect(ref.body.details[0]).toEqual({ field: 'customers[1].devices[3].locationExternalId', message: 'no location of this customer has this externalId' });
    const dup = clone();
    dup.customers[4].contacts[7].externalId = dup.customers[4].contacts[2].externalId;
    expect((await request(t.http).post('/api/v1/imports').set('Authorization', auth).send(dup).expect(400)).body.details[0].field).toBe('customers[4].contacts[7].externalId');
    const notJson = await request(t.http).post('/api/v1/imports').set('Authorization', auth).set('Content-Type', 'application/vnd.rmm-import+json').send('{"format": ').expect(400);
    expect(notJson.body.code).toBe('invalid_json');
    expect(await ownerQuery(`SELECT count(*)::int AS n FROM imports WHERE partner_id = $1`, [ids.partner])).toEqual(before);
  });

  it('accepts the same document as application/vnd.rmm-import+json, for exports over 1 MB', async () => {
    const res = await runImport(t, auth, JSON.stringify(EXPORT), { dryRun: true }, 'application/vnd.rmm-import+json');
    expect(res.report.summary.created).toBe(0);
    expect(res.status).toBe('completed');
  });
});
