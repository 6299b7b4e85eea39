import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';

/**
 * Site restriction is enforced by the database, not only by the services: a site-restricted
 * caller's transaction (app.site_ids set, as TenantTransactionService sets it from the principal) sees
 * and writes no row of another site in any site-bearing table, with no service code in between.
 */
describe('site scope in row-level security', () => {
  let owner: Client;
  let app: Client;
  const id = { partner: randomUUID(), org: randomUUID(), siteA: randomUUID(), siteB: randomUUID(), deviceA: randomUUID(), deviceB: randomUUID() };
  const tag = randomBytes(4).toString('hex');

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $2)`, [id.partner, `Sites ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'Org')`, [id.org, id.partner]);
    await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $3, 'A'), ($2, $3, 'B')`, [id.siteA, id.siteB, id.org]);
    await owner.query(`INSERT INTO devices (id, org_id, site_id, hostname) VALUES ($1, $3, $4, 'A-1'), ($2, $3, $5, 'B-1')`, [id.deviceA, id.deviceB, id.org, id.siteA, id.siteB]);
    await owner.query(
      `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status) VALUES ($1, $2, $3, 'uac_intercept', 'pending'), ($1, $4, $5, 'uac_intercept', 'pending')`,
      [id.org, id.siteA, id.deviceA, id.siteB, id.deviceB],
    );
    await owner.query(`INSERT INTO device_groups (org_id, site_id, name) VALUES ($1, $2, 'group A'), ($1, $3, 'group B'), ($1, NULL, 'group org-wide')`, [id.org, id.siteA, id.siteB]);
    await owner.query(`INSERT INTO contacts (org_id, site_id, name) VALUES ($1, $2, 'contact A'), ($1, $3, 'contact B'), ($1, NULL, 'contact org-wide')`, [id.org, id.siteA, id.siteB]);
  });
  afterAll(async () => {
    await app.end();
    await owner.end();
  });

  /** Runs fn as the application role in an organization-scope transaction; `sites` null is an unrestricted caller. */
  async function as<T>(sites: string[] | null, fn: () => Promise<T>): Promise<T> {
    await app.query('BEGIN');
    try {
      await app.query(
        `SELECT set_config('app.scope', 'organization', true), set_config('app.org_ids', $1, true), set_config('app.partner_ids', '{}', true),
                set_config('app.user_id', '', true), set_config('app.partner_wide', '', true), set_config('app.site_ids', $2, true)`,
        [`{${id.org}}`, sites ? `{${sites.join(',')}}` : ''],
      );
      return await fn();
    } finally {
      await app.query('ROLLBACK');
    }
  }

  const siteOf = async (table: string) => (await app.query<{ site_id: string | null }>(`SELECT site_id FROM ${table} WHERE org_id = $1 ORDER BY site_id NULLS LAST`, [id.org])).rows.map((r) => r.site_id);

  it.each([
    ['devices', ['A']],
    ['elevation_requests', ['A']],
    ['device_groups', ['A']],
    ['contacts', ['A', null]],
  ])('shows a caller restricted to site A only rows of site A in %s (organization-wide contacts stay visible)', async (table, expected) => {
    const named = (expected as (string | null)[]).map((s) => (s === 'A' ? id.siteA : s));
    expect(await as([id.siteA], () => siteOf(table))).toEqual(named);
  });

  it.each(['devices', 'elevation_requests', 'device_groups', 'contacts'])('shows an unrestricted caller every site of %s', async (table) => {
    const sites = await as(null, () => siteOf(table));
    expect(sites).toEqual(expect.arrayContaining([id.siteA, id.siteB]));
  });

  it('shows a caller restricted to a site of another organization nothing', async () => {
    expect(await as([randomUUID()], () => siteOf('devices'))).toEqual([]);
  });

  it('refuses a restricted caller a row written into another site, and a row moved there', async () => {
    const rls = { code: '42501' };
    await as([id.siteA], () => expect(app.query(`INSERT INTO devices (org_id, site_id, hostname) VALUES ($1, $2, 'sneaky')`, [id.org, id.siteB])).rejects.toMatchObject(rls));
    await as([id.siteA], () => expect(app.query(`UPDATE devices SET site_id = $2 WHERE id = $1`, [id.deviceA, id.siteB])).rejects.toMatchObject(rls));
    await as([id.siteA], () => expect(app.query(`INSERT INTO contacts (org_id, site_id, name) VALUES ($1, $2, 'sneaky')`, [id.org, id.siteB])).rejects.toMatchObject(rls));
    await as([id.siteA], () => expect(app.query(`INSERT INTO device_groups (org_id, site_id, name) VALUES ($1, NULL, 'org-wide')`, [id.org])).rejects.toMatchObject(rls));
  });

  it('neither changes nor deletes another site\'s rows for a restricted caller', async () => {
    const counts = await as([id.siteA], async () => [
      (await app.query(`UPDATE devices SET hostname = 'taken' WHERE id = $1`, [id.deviceB])).rowCount,
      (await app.query(`UPDATE elevation_requests SET status = 'denied' WHERE device_id = $1`, [id.deviceB])).rowCount,
      (await app.query(`DELETE FROM contacts WHERE site_id = $1`, [id.siteB])).rowCount,
    ]);
    expect(counts).toEqual([0, 0, 0]);
    expect((await owner.query(`SELECT hostname FROM devices WHERE id = $1`, [id.deviceB])).rows[0].hostname).toBe('B-1');
    expect((await owner.query(`SELECT status FROM elevation_requests WHERE device_id = $1`, [id.deviceB])).rows[0].status).toBe('pending');
  });
});
