import { ContactEntity } from '../../../src/modules/content/contacts/contact.entity';
import { ContactRepository, type ContactWrite } from '../../../src/modules/content/contacts/contact.repository';
import { CustomFieldEntity } from '../../../src/modules/content/custom-fields/custom-field.entity';
import { CustomFieldValueEntity } from '../../../src/modules/content/custom-fields/custom-field-value.entity';
import { CustomFieldRepository, type NewCustomField } from '../../../src/modules/content/custom-fields/custom-field.repository';
import { ScriptEntity } from '../../../src/modules/content/scripts/script.entity';
import { ScriptRepository, type ScriptWrite } from '../../../src/modules/content/scripts/script.repository';
import { SiteEntity } from '../../../src/modules/tenancy/sites/site.entity';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Contacts, scripts and custom-field definitions. Their jsonb columns are read back after each
 * write, so an answer carries PostgreSQL's key order (shorter keys first), whatever order the
 * caller wrote; partner-wide scripts and fields are seen by the partner's organizations only.
 */
describe('content repositories', () => {
  let m: Medium;
  let t: TenantRows;
  let contacts: ContactRepository;
  let scripts: ScriptRepository;
  let fields: CustomFieldRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });

  beforeAll(async () => {
    m = await startMedium([ContactRepository, ScriptRepository, CustomFieldRepository], {}, { entities: [ContactEntity, ScriptEntity, CustomFieldEntity, CustomFieldValueEntity, SiteEntity] });
    contacts = m.get(ContactRepository);
    scripts = m.get(ScriptRepository);
    fields = m.get(CustomFieldRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('ContactRepository', () => {
    const contact = (over: Partial<ContactWrite> = {}): ContactWrite => ({ siteId: null, name: 'Contact', email: null, phones: [], title: null, notes: null, externalId: null, ...over });
    const list = (f: Partial<Parameters<ContactRepository['list']>[0]> = {}) => contacts.list({ orgId: t.orgA, siteIds: null, limit: 50, offset: 0, ...f });
    let zoe: string;
    let adam: string;
    let bea: string;

    beforeAll(async () => {
      zoe = (await m.as(asAdminA(), () => contacts.insert(t.orgA, contact({ name: 'zoe', title: 'CFO', externalId: 'crm-1' })))).id;
      adam = (await m.as(asAdminA(), () => contacts.insert(t.orgA, contact({ name: 'Adam', siteId: t.siteA1, email: 'adam@a.example' })))).id;
      bea = (await m.as(asAdminA(), () => contacts.insert(t.orgA, contact({ name: 'Bea_100%', siteId: t.siteA2 })))).id;
    });

    it('answers the phones as PostgreSQL stores them, whatever key order was written', async () => {
      const phones = [{ number: '+33 1 23 45 67 89', type: 'work' }] as unknown as ContactWrite['phones'];
      const created = await m.as(asAdminA(), () => contacts.insert(t.orgA, contact({ name: 'phones', phones })));
      expect(JSON.stringify(created.phones)).toBe('[{"type":"work","number":"+33 1 23 45 67 89"}]');
      const updated = await m.as(asAdminA(), () => contacts.update(created.id, contact({ name: 'phones', phones: [{ number: '+1 555', type: 'mobile' }] as unknown as ContactWrite['phones'] })));
      expect(JSON.stringify(updated!.phones)).toBe('[{"type":"mobile","number":"+1 555"}]');
      expect(await m.as(asAdminA(), () => contacts.delete(created.id))).toBe(1);
    });

    it('pages contacts by name without regard to case, with the total, and counts again on a page past the end', async () => {
      expect(await m.as(asAdminA(), () => list())).toEqual({ rows: [expect.objectContaining({ id: adam }), expect.objectContaining({ id: bea }), expect.objectContaining({ id: zoe })], total: 3 });
      expect(await m.as(asAdminA(), () => list({ limit: 1, offset: 2 }))).toEqual({ rows: [expect.objectContaining({ id: zoe })], total: 3 });
      expect(await m.as(asAdminA(), () => list({ offset: 10 }))).toEqual({ rows: [], total: 3 });
      expect(await m.as(asAdminA(), () => list({ q: 'nobody' }))).toEqual({ rows: [], total: 0 });
    });

    it('filters on name, email or title taken literally, on the external id, and on sites keeping organization-level contacts', async () => {
      const ids = async (f: Partial<Parameters<ContactRepository['list']>[0]>) => (await m.as(asAdminA(), () => list(f))).rows.map((c) => c.id);
      expect(await ids({ q: 'cfo' })).toEqual([zoe]);
      expect(await ids({ q: 'A.EXAMPLE' })).toEqual([adam]);
      expect(await ids({ q: '_100%' })).toEqual([bea]);
      expect(await ids({ q: 'a_a' })).toEqual([]);
      expect(await ids({ externalId: 'crm-1' })).toEqual([zoe]);
      expect(await ids({ siteId: t.siteA2 })).toEqual([bea]);
      expect(await ids({ siteIds: [t.siteA1] })).toEqual([adam, zoe]);
    });

    it('shows a site-restricted caller organization-level contacts and those of its sites, and lets it write only those', async () => {
      expect((await m.as(asSiteUserA1(), () => list())).rows.map((c) => c.id)).toEqual([adam, zoe]);
      expect(await m.as(asSiteUserA1(), () => contacts.find(bea))).toBeNull();
      expect(await m.as(asSiteUserA1(), () => contacts.update(bea, contact({ name: 'hijacked' })))).toBeNull();
      expect(await m.as(asSiteUserA1(), () => contacts.delete(bea))).toBe(0);
      await expect(m.as(asSiteUserA1(), () => contacts.insert(t.orgA, contact({ name: 'planted', siteId: t.siteA2 })))).rejects.toThrow(/row-level security/);
      expect(await m.tryAs(asSiteUserA1(), () => contacts.insert(t.orgA, contact({ name: 'allowed', siteId: t.siteA1 })))).toMatchObject({ siteId: t.siteA1 });
    });

    it('neither shows, changes nor creates another tenant’s contacts, nor reads its sites', async () => {
      const theirs = await m.as(asAdminB(), () => contacts.insert(t.orgB, contact({ name: 'B person', siteId: t.siteB1 })));
      expect(await m.as(asAdminA(), () => contacts.find(theirs.id))).toBeNull();
      expect(await m.as(asAdminA(), () => list({ orgId: t.orgB }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminA(), () => contacts.update(theirs.id, contact({ name: 'hijacked' })))).toBeNull();
      expect(await m.as(asAdminA(), () => contacts.delete(theirs.id))).toBe(0);
      expect(await m.as(asAdminA(), () => contacts.siteOrg(t.siteB1))).toBeNull();
      expect(await m.as(asAdminA(), () => contacts.siteOrg(t.siteA2))).toEqual({ orgId: t.orgA });
      await expect(m.as(asAdminA(), () => contacts.insert(t.orgB, contact({ name: 'planted' })))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT name FROM contacts WHERE org_id = $1`, [t.orgB])).rows).toEqual([{ name: 'B person' }]);
    });
  });

  describe('ScriptRepository', () => {
    const script = (over: Partial<ScriptWrite> = {}): ScriptWrite => ({
      name: 'script',
      description: null,
      category: 'Maintenance',
      language: 'powershell',
      body: 'Write-Output 1',
      parameters: [],
      runAs: 'system',
      timeoutSeconds: 300,
      exitCodeSeverityMapping: [],
      ...over,
    });
    const partnerOwned = () => ({ partnerId: t.partnerP, orgId: null });
    const ownedByA = () => ({ partnerId: null, orgId: t.orgA });

    it('answers parameters and exit-code mappings as PostgreSQL stores them, whatever key order was written', async () => {
      const parameters = [{ description: 'target', required: true, type: 'string', name: 'path' }] as ScriptWrite['parameters'];
      const mapping = [{ severity: 'error', to: 9, from: 1 }] as ScriptWrite['exitCodeSeverityMapping'];
      const created = await m.as(asAdminA(), () => scripts.insert(ownedByA(), script({ name: 'jsonb', parameters, exitCodeSeverityMapping: mapping })));
      expect(JSON.stringify(created.parameters)).toBe('[{"name":"path","type":"string","required":true,"description":"target"}]');
      expect(JSON.stringify(created.exitCodeSeverityMapping)).toBe('[{"to":9,"from":1,"severity":"error"}]');
      const updated = await m.as(asAdminA(), () => scripts.update(created.id, script({ name: 'jsonb', exitCodeSeverityMapping: [{ severity: 'warning', exitCode: 3 }] })));
      expect(JSON.stringify(updated!.exitCodeSeverityMapping)).toBe('[{"exitCode":3,"severity":"warning"}]');
      expect(await m.as(asAdminA(), () => scripts.delete(created.id))).toBe(1);
    });

    it('lists an organization’s scripts and its partner’s by category then name without regard to case, without the body', async () => {
      const own = await m.as(asAdminA(), () => scripts.insert(ownedByA(), script({ name: 'beta', category: 'maintenance' })));
      const shared = await m.as(asTech(), () => scripts.insert(partnerOwned(), script({ name: 'Alpha', category: 'Maintenance', language: 'bash' })));
      const other = await m.as(asAdminA(), () => scripts.insert(ownedByA(), script({ name: 'audit', category: 'Compliance' })));
      const listed = await m.as(asAdminA(), () => scripts.list({ orgId: t.orgA, limit: 50, offset: 0 }));
      expect(listed.rows.map((s) => s.id)).toEqual([other.id, shared.id, own.id]);
      expect(listed.total).toBe(3);
      expect((listed.rows[0] as Partial<ScriptEntity>).body).toBeUndefined();
      expect((await m.as(asAdminA(), () => scripts.list({ orgId: t.orgA, availability: 'partner', limit: 50, offset: 0 }))).rows.map((s) => s.id)).toEqual([shared.id]);
      expect((await m.as(asAdminA(), () => scripts.list({ category: 'MAINTENANCE', language: 'powershell', limit: 50, offset: 0 }))).rows.map((s) => s.id)).toEqual([own.id]);
      expect((await m.as(asAdminA(), () => scripts.list({ orgId: t.orgA, limit: 50, offset: 50 }))).rows).toEqual([]);
      expect((await m.as(asAdminA(), () => scripts.find(shared.id)))!.body).toBe('Write-Output 1');
    });

    it('lets only a partner-wide caller change a partner’s script, and never shows it to another partner', async () => {
      const shared = await m.as(asTech(), () => scripts.insert(partnerOwned(), script({ name: 'shared only' })));
      expect(await m.as(asAdminA(), () => scripts.update(shared.id, script({ name: 'hijacked' })))).toBeNull();
      expect(await m.as(asAdminA(), () => scripts.delete(shared.id))).toBe(0);
      await expect(m.as(asAdminA(), () => scripts.insert(partnerOwned(), script({ name: 'planted' })))).rejects.toThrow(/row-level security/);
      expect(await m.as(asAdminB(), () => scripts.find(shared.id))).toBeNull();
      expect((await m.as(asAdminB(), () => scripts.list({ limit: 50, offset: 0 }))).rows).toEqual([]);
      expect(await m.as(asTech(), () => scripts.update(shared.id, script({ name: 'shared renamed' })))).toMatchObject({ name: 'shared renamed' });
    });

    it('neither shows, changes nor creates another organization’s scripts', async () => {
      const theirs = await m.as(asAdminB(), () => scripts.insert({ partnerId: null, orgId: t.orgB }, script({ name: 'B script' })));
      expect(await m.as(asAdminA(), () => scripts.find(theirs.id))).toBeNull();
      expect(await m.as(asAdminA(), () => scripts.list({ orgId: t.orgB, limit: 50, offset: 0 }))).toEqual({ rows: [], total: 0 });
      expect(await m.as(asAdminA(), () => scripts.update(theirs.id, script({ name: 'hijacked' })))).toBeNull();
      expect(await m.as(asAdminA(), () => scripts.delete(theirs.id))).toBe(0);
      await expect(m.as(asAdminA(), () => scripts.insert({ partnerId: null, orgId: t.orgB }, script({ name: 'planted' })))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT name FROM scripts WHERE org_id = $1`, [t.orgB])).rows).toEqual([{ name: 'B script' }]);
    });
  });

  describe('CustomFieldRepository', () => {
    const field = (over: Partial<NewCustomField> = {}): NewCustomField => ({
      partnerId: null,
      orgId: t.orgA,
      key: 'field',
      name: 'Field',
      description: null,
      type: 'text',
      options: [],
      validation: {},
      ...over,
    });

    it('answers the validation as PostgreSQL stores it, whatever key order was written', async () => {
      const created = await m.as(asAdminA(), () => fields.insert(field({ key: 'ram_gb', type: 'number', validation: { integer: true, min: 1, max: 512 } })));
      expect(JSON.stringify(created.validation)).toBe('{"max":512,"min":1,"integer":true}');
      const updated = await m.as(asAdminA(), () => fields.update(created.id, { name: 'RAM', description: 'GiB', options: [], validation: { integer: false, max: 64 } }));
      expect(JSON.stringify(updated!.validation)).toBe('{"max":64,"integer":false}');
    });

    it('lists the fields that apply to an organization by key, the partner’s before its own', async () => {
      const own = await m.as(asAdminA(), () => fields.insert(field({ key: 'asset_tag' })));
      const shared = await m.as(asTech(), () => fields.insert(field({ partnerId: t.partnerP, orgId: null, key: 'asset_tag_p', type: 'single_select', options: ['b', 'a'] })));
      const sameKey = await m.as(asAdminA(), () => fields.insert(field({ orgId: t.orgA, key: 'warranty' })));
      const partnerSameKey = await m.as(asTech(), () => fields.insert(field({ partnerId: t.partnerP, orgId: null, key: 'warranty' })));
      const keys = (await m.as(asAdminA(), () => fields.list({ orgId: t.orgA }))).map((f) => f.id).filter((id) => [own.id, shared.id, sameKey.id, partnerSameKey.id].includes(id));
      expect(keys).toEqual([own.id, shared.id, partnerSameKey.id, sameKey.id]);
      expect((await m.as(asAdminA(), () => fields.list({ orgId: t.orgA, scope: 'partner' }))).map((f) => f.id)).toEqual([shared.id, partnerSameKey.id]);
      expect(shared.options).toEqual(['b', 'a']);
    });

    it('finds a key clash across the partner in system context', async () => {
      await m.as(asTech(), () => fields.insert(field({ partnerId: t.partnerP, orgId: null, key: 'clash_p' })));
      await m.as(orgPrincipal(t.orgA2), () => fields.insert(field({ orgId: t.orgA2, key: 'clash_o' })));
      expect(await m.system(() => fields.keyClash({ partnerId: null, orgId: t.orgA }, 'clash_p'))).toBe(true);
      expect(await m.system(() => fields.keyClash({ partnerId: t.partnerP, orgId: null }, 'clash_o'))).toBe(true);
      expect(await m.system(() => fields.keyClash({ partnerId: null, orgId: t.orgB }, 'clash_p'))).toBe(false);
      expect(await m.system(() => fields.keyClash({ partnerId: t.partnerQ, orgId: null }, 'clash_o'))).toBe(false);
    });

    it('writes a device’s value only when it changes, and never a value of another tenant’s device', async () => {
      const def = await m.as(asAdminA(), () => fields.insert(field({ key: 'owner_name' })));
      expect(await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA1, def.id, 'alice'))).toBe(1);
      expect(await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA1, def.id, 'alice'))).toBe(0);
      expect(await m.as(asAdminA(), () => fields.upsertValue(t.orgA, t.deviceA1, def.id, 'bob'))).toBe(1);
      expect(await m.as(asAdminA(), () => fields.values(t.orgA, t.deviceA1))).toEqual([expect.objectContaining({ definitionId: def.id, definition: expect.objectContaining({ key: 'owner_name' }), value: 'bob' })]);
      expect(await m.as(asAdminA(), () => fields.countValues(def.id))).toBe(1);
      expect(await m.as(asAdminA(), () => fields.device(t.deviceB1))).toBeNull();
      await expect(m.as(asAdminA(), () => fields.upsertValue(t.orgB, t.deviceB1, def.id, 'planted'))).rejects.toThrow(/row-level security/);
    });

    it('neither shows, changes nor deletes another tenant’s field, nor a partner field to a caller not partner-wide', async () => {
      const theirs = await m.as(asAdminB(), () => fields.insert(field({ orgId: t.orgB, key: 'b_field' })));
      const shared = await m.as(asTech(), () => fields.insert(field({ partnerId: t.partnerP, orgId: null, key: 'p_only' })));
      expect(await m.as(asAdminA(), () => fields.find(theirs.id))).toBeNull();
      expect(await m.as(asAdminB(), () => fields.find(shared.id))).toBeNull();
      expect(await m.as(asAdminA(), () => fields.update(theirs.id, { name: 'hijacked', description: null, options: [], validation: {} }))).toBeNull();
      expect(await m.as(asAdminA(), () => fields.update(shared.id, { name: 'hijacked', description: null, options: [], validation: {} }))).toBeNull();
      expect(await m.as(asAdminA(), () => fields.delete(theirs.id))).toBe(0);
      await expect(m.as(asAdminA(), () => fields.insert(field({ orgId: t.orgB, key: 'planted' })))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT name FROM custom_field_definitions WHERE id = ANY ($1::uuid[]) ORDER BY key`, [[theirs.id, shared.id]])).rows).toEqual([
        { name: 'Field' },
        { name: 'Field' },
      ]);
    });
  });
});
