import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';

/**
 * An import's report items (import_phase_items, one row per committed phase) are visible and
 * writable exactly when their import is: the policy reads `imports` under the caller's own
 * policies. Talks to PostgreSQL as the application role with no service code in between.
 */
describe('import phase items in the database', () => {
  let owner: Client;
  let app: Client;
  const id = { partner: randomUUID(), otherPartner: randomUUID(), orgA: randomUUID(), orgB: randomUUID(), orgQ: randomUUID() };
  const tag = randomBytes(4).toString('hex');
  let partnerImport: string;
  let orgImport: string;

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $3), ($2, $4)`, [id.partner, id.otherPartner, `PI ${tag}`, `PI other ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'A'), ($3, $2, 'B'), ($4, $5, 'Q')`, [id.orgA, id.partner, id.orgB, id.orgQ, id.otherPartner]);
    const insertImport = async (orgId: string | null) =>
      (
        await owner.query<{ id: string }>(
          `INSERT INTO imports (partner_id, org_id, format, dry_run, overwrite, phases, total_items, actor_type, scope)
           VALUES ($1, $2, $3, false, false, '{devices}', 1, 'user', '{}') RETURNING id`,
          [id.partner, orgId, orgId ? 'contacts_csv' : 'interchange'],
        )
      ).rows[0].id;
    partnerImport = await insertImport(null);
    orgImport = await insertImport(id.orgA);
    for (const importId of [partnerImport, orgImport]) {
      await owner.query(`INSERT INTO import_phase_items (import_id, ordinal, phase, items) VALUES ($1, 0, 'devices', '{"created":[{"kind":"device","name":"secret"}]}')`, [importId]);
    }
  });
  afterAll(async () => {
    await app.end();
    await owner.end();
  });

  /** Runs fn as the application role in a partner-scope transaction (null: no settings at all). */
  async function as<T>(who: { partner: string; orgs: string[]; wide: boolean } | null, fn: () => Promise<T>): Promise<T> {
    await app.query('BEGIN');
    try {
      if (who) {
        await app.query(
          `SELECT set_config('app.scope', 'partner', true), set_config('app.org_ids', $1, true), set_config('app.partner_ids', $2, true),
                  set_config('app.user_id', '', true), set_config('app.partner_wide', $3, true)`,
          [`{${who.orgs.join(',')}}`, `{${who.partner}}`, who.wide ? 'on' : ''],
        );
      }
      return await fn();
    } finally {
      await app.query('ROLLBACK');
    }
  }
  const visible = () => app.query<{ import_id: string }>(`SELECT import_id FROM import_phase_items WHERE import_id = ANY ($1::uuid[]) ORDER BY import_id`, [[partnerImport, orgImport]]).then((r) => r.rows.map((x) => x.import_id).sort());

  it("shows a partner-level import's items only to a technician who reaches every organization, as the import itself", async () => {
    expect(await as({ partner: id.partner, orgs: [id.orgA, id.orgB], wide: true }, visible)).toEqual([partnerImport, orgImport].sort());
    expect(await as({ partner: id.partner, orgs: [id.orgA], wide: false }, visible)).toEqual([orgImport]);
    expect(await as({ partner: id.partner, orgs: [id.orgB], wide: false }, visible)).toEqual([]);
  });

  it('shows nothing to another partner or to a transaction without settings', async () => {
    expect(await as({ partner: id.otherPartner, orgs: [id.orgQ], wide: true }, visible)).toEqual([]);
    expect(await as(null, visible)).toEqual([]);
  });

  it("refuses writing items for an import the caller cannot see", async () => {
    await as({ partner: id.otherPartner, orgs: [id.orgQ], wide: true }, () =>
      expect(app.query(`INSERT INTO import_phase_items (import_id, ordinal, phase, items) VALUES ($1, 1, 'contacts', '{}')`, [orgImport])).rejects.toMatchObject({ code: '42501' }),
    );
  });
});
