import { Client } from 'pg';

interface TableRow {
  relname: string;
  relrowsecurity: boolean;
  relforcerowsecurity: boolean;
  policies: number;
}

/**
 * Guards the schema as it grows: every table any migration adds to schema public must have
 * row-level security enabled and forced with at least one policy, and the request role must be
 * unable to bypass it or to rewrite the audit trail.
 */
describe('row-level security catalog', () => {
  let owner: Client;
  let app: Client;

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
  });
  afterAll(async () => {
    await owner.end();
    await app.end();
  });

  async function publicTables(): Promise<TableRow[]> {
    const { rows } = await owner.query<TableRow>(
      `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
              (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid)::int AS policies
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> 'migrations'
        ORDER BY c.relname`,
    );
    return rows;
  }

  it('finds the foundation tables, so the check below is not vacuous', async () => {
    const names = (await publicTables()).map((t) => t.relname);
    expect(names).toEqual(expect.arrayContaining(['partners', 'organizations', 'sites', 'devices', 'roles', 'users', 'api_keys', 'audit_logs']));
  });

  it('enables and forces row-level security with at least one policy on every table in schema public', async () => {
    const offenders = (await publicTables())
      .filter((t) => !t.relrowsecurity || !t.relforcerowsecurity || t.policies < 1)
      .map((t) => `${t.relname} (enabled=${t.relrowsecurity}, forced=${t.relforcerowsecurity}, policies=${t.policies})`);
    expect(offenders).toEqual([]);
  });

  it('reads the request scope once per statement in every read policy, never per row (migration 1763701700000)', async () => {
    // A scope function called per row parses the caller's whole list of organizations again for every row examined.
    const { rows } = await owner.query<{ policy: string }>(
      `SELECT tablename || '.' || policyname AS policy FROM pg_policies
        WHERE schemaname = 'public' AND cmd IN ('ALL', 'SELECT')
          AND qual ~ '(app_has_(org|owner|partner|site)_access\\(|(?<!SELECT )app_(is_system|current_user_id|org_ids|partner_ids|site_ids)\\(\\))'
        ORDER BY 1`,
    );
    expect(rows.map((r) => r.policy)).toEqual([]);
  });

  it('serves requests through a role that is neither a superuser nor allowed to bypass row-level security', async () => {
    const { rows } = await app.query<{ rolsuper: boolean; rolbypassrls: boolean }>(`SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`);
    expect(rows).toEqual([{ rolsuper: false, rolbypassrls: false }]);
  });

  it('gives the request role no table of its own, since owners are exempt from policies they do not force', async () => {
    const { rows } = await app.query(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)`,
    );
    expect(rows).toEqual([]);
  });

  it.each([
    ['UPDATE', `UPDATE audit_logs SET action = 'tampered'`],
    ['DELETE', `DELETE FROM audit_logs`],
    ['TRUNCATE', `TRUNCATE audit_logs`],
  ])('refuses the request role %s on audit_logs, even in system context', async (_verb, sql) => {
    await app.query('BEGIN');
    try {
      await app.query(`SELECT set_config('app.scope', 'system', true)`);
      await expect(app.query(sql)).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/permission denied for table audit_logs/) });
    } finally {
      await app.query('ROLLBACK');
    }
  });
});
