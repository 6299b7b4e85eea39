import { randomUUID } from 'node:crypto';
import { ContactBatchRepository, type ContactRecord } from '../../../src/modules/content/contacts/contact-batch.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Contacts as the importer reads and writes them: whole batches in one statement, in the caller's transaction. */
describe('ContactBatchRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let contacts: ContactBatchRepository;
  let ofB: ContactRecord;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asSiteUserA1 = () => orgPrincipal(t.orgA, { userId: t.siteUserA1, siteIds: [t.siteA1] });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const contact = (over: Partial<ContactRecord> & Pick<ContactRecord, 'org_id'>): ContactRecord => ({
    id: randomUUID(),
    site_id: null,
    name: `Contact ${randomUUID().slice(0, 8)}`,
    email: null,
    phones: [],
    title: null,
    notes: null,
    external_id: null,
    ...over,
  });
  const stored = async (id: string) =>
    (await m.owner.query(`SELECT id, org_id, site_id, name, email, phones, title, notes, external_id FROM contacts WHERE id = $1`, [id])).rows[0] as ContactRecord | undefined;
  const insertAsOwner = async (c: ContactRecord, createdAt: string) =>
    m.owner.query(`INSERT INTO contacts (id, org_id, site_id, name, email, phones, title, notes, external_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
      c.id,
      c.org_id,
      c.site_id,
      c.name,
      c.email,
      JSON.stringify(c.phones),
      c.title,
      c.notes,
      c.external_id,
      createdAt,
    ]);

  beforeAll(async () => {
    m = await startMedium([ContactBatchRepository]);
    contacts = m.get(ContactBatchRepository);
    t = await seedTenants(m.owner);
    ofB = contact({ org_id: t.orgB, name: 'Of B', email: `b@${t.label}.example` });
    await insertAsOwner(ofB, '2026-01-01T00:00:00Z');
  });
  afterAll(() => m.close());

  describe('ofOrgs and one', () => {
    it('answers the organizations’ contacts oldest first, and by id among contacts of one instant', async () => {
      const oldest = contact({ org_id: t.orgA2, name: 'Oldest', phones: [{ type: 'work', number: '+1 555 0100' }] as ContactRecord['phones'] });
      const tiedIds = [randomUUID(), randomUUID()].sort();
      const tied = tiedIds.map((id) => contact({ id, org_id: t.orgA2 }));
      await insertAsOwner(tied[1], '2026-01-02T00:00:00Z');
      await insertAsOwner(tied[0], '2026-01-02T00:00:00Z');
      await insertAsOwner(oldest, '2026-01-01T00:00:00Z');
      expect(await m.as(asTech(), () => contacts.ofOrgs([t.orgA2]))).toEqual([oldest, ...tied]);
      expect(await m.as(asTech(), () => contacts.one(t.orgA2, oldest.id))).toEqual(oldest);
    });

    it('answers nothing for no organizations, nothing of another tenant, and only a site-restricted caller’s sites', async () => {
      expect(await m.as(asAdminA(), () => contacts.ofOrgs([]))).toEqual([]);
      expect(await m.as(asAdminA(), () => contacts.ofOrgs([t.orgB]))).toEqual([]);
      expect(await m.as(asAdminA(), () => contacts.one(t.orgB, ofB.id))).toBeNull();
      expect(await m.as(asAdminA(), () => contacts.one(t.orgA, ofB.id))).toBeNull();
      const [a1, a2, wide] = [contact({ org_id: t.orgA, site_id: t.siteA1 }), contact({ org_id: t.orgA, site_id: t.siteA2 }), contact({ org_id: t.orgA })];
      await m.as(asAdminA(), () => contacts.insertMany([a1, a2, wide]));
      expect((await m.as(asSiteUserA1(), () => contacts.ofOrgs([t.orgA]))).map((c) => c.id).sort()).toEqual([a1.id, wide.id].sort());
      expect(await m.as(asSiteUserA1(), () => contacts.one(t.orgA, a2.id))).toBeNull();
    });
  });

  describe('insertMany and updateMany', () => {
    it('writes a batch with every column, and nothing for an empty one', async () => {
      const rows = [
        contact({ org_id: t.orgA, site_id: t.siteA2, email: `full@${t.label}.example`, phones: [{ type: 'mobile', number: '+44 7700 900000' }] as ContactRecord['phones'], title: 'CTO', notes: 'on call', external_id: `ext-${t.label}` }),
        contact({ org_id: t.orgA }),
      ];
      await m.as(asAdminA(), () => contacts.insertMany(rows));
      expect(await stored(rows[0].id)).toEqual(rows[0]);
      expect(await stored(rows[1].id)).toEqual(rows[1]);
      await m.as(asAdminA(), () => contacts.insertMany([]));
      await m.as(asAdminA(), () => contacts.updateMany([]));
    });

    it('writes none of a batch in which an external id repeats within the organization', async () => {
      const first = contact({ org_id: t.orgA, external_id: `dup-${t.label}` });
      await expect(m.as(asAdminA(), () => contacts.insertMany([first, contact({ org_id: t.orgA, external_id: `dup-${t.label}` })]))).rejects.toThrow(/duplicate key/);
      expect(await stored(first.id)).toBeUndefined();
      const elsewhere = [contact({ org_id: t.orgA, external_id: `shared-${t.label}` }), contact({ org_id: t.orgA2, external_id: `shared-${t.label}` })];
      await m.as(asTech(), () => contacts.insertMany(elsewhere));
      expect(await stored(elsewhere[1].id)).toEqual(elsewhere[1]);
    });

    it('changes every row matched by organization and id, clearing columns with null', async () => {
      const c = contact({ org_id: t.orgA, site_id: t.siteA1, email: `before@${t.label}.example`, title: 'Before', external_id: `change-${t.label}` });
      await m.as(asAdminA(), () => contacts.insertMany([c]));
      const changed = { ...c, site_id: null, name: 'After', email: null, phones: [{ type: 'work', number: '+1 555 0199' }] as ContactRecord['phones'], title: null, notes: 'moved', external_id: null };
      await m.as(asAdminA(), () => contacts.updateMany([changed]));
      expect(await stored(c.id)).toEqual(changed);
      await m.as(asTech(), () => contacts.updateMany([{ ...changed, org_id: t.orgA2, name: 'misfiled' }]));
      expect((await stored(c.id))!.name).toBe('After');
    });

    it('neither writes nor changes another tenant’s contacts, nor those of a site the caller does not reach', async () => {
      const planted = contact({ org_id: t.orgB });
      await expect(m.as(asAdminA(), () => contacts.insertMany([contact({ org_id: t.orgA }), planted]))).rejects.toThrow(/row-level security/);
      expect(await stored(planted.id)).toBeUndefined();
      await m.as(asAdminA(), () => contacts.updateMany([{ ...ofB, name: 'hijacked' }]));
      expect(await stored(ofB.id)).toEqual(ofB);
      await expect(m.as(asSiteUserA1(), () => contacts.insertMany([contact({ org_id: t.orgA, site_id: t.siteA2 })]))).rejects.toThrow(/row-level security/);
      const a2 = contact({ org_id: t.orgA, site_id: t.siteA2 });
      await m.as(asAdminA(), () => contacts.insertMany([a2]));
      await m.as(asSiteUserA1(), () => contacts.updateMany([{ ...a2, name: 'hijacked' }]));
      expect(await stored(a2.id)).toEqual(a2);
    });
  });
});
