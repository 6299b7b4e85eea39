import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';

/**
 * Partner-owned rows act on every organization of the partner, so only a caller whose reach is
 * the whole partner may write them. The database enforces it on its own: these tests talk to
 * PostgreSQL as the application role with no service code in between.
 */
describe('partner-wide writes in the database', () => {
  let owner: Client;
  let app: Client;
  const id = { partner: randomUUID(), otherPartner: randomUUID(), orgA: randomUUID(), orgB: randomUUID() };
  const tag = randomBytes(4).toString('hex');

  /** A partner-owned row of each kind, inserted by the owner, and a statement that inserts one more. */
  const kinds: { table: string; insert: string }[] = [
    { table: 'roles', insert: `INSERT INTO roles (scope, partner_id, name, permissions) VALUES ('partner', $1, 'r-' || $2, '{*}') RETURNING id` },
    {
      table: 'api_keys',
      insert: `INSERT INTO api_keys (partner_id, name, key_prefix, key_hash, permissions) VALUES ($1, 'k', 'abcdefgh', 'h-' || $2, '{*}') RETURNING id`,
    },
    { table: 'sso_providers', insert: `INSERT INTO sso_providers (partner_id, name, type, auto_provision) VALUES ($1, 'p-' || $2, 'oidc', false) RETURNING id` },
    {
      table: 'scripts',
      insert: `INSERT INTO scripts (partner_id, name, category, language, body, run_as) VALUES ($1, 's-' || $2, 'c', 'bash', 'echo', 'system') RETURNING id`,
    },
    { table: 'policies', insert: `INSERT INTO policies (partner_id, type, name) VALUES ($1, 'configuration', 'pol-' || $2) RETURNING id` },
    {
      table: 'custom_field_definitions',
      insert: `INSERT INTO custom_field_definitions (partner_id, key, name, type) VALUES ($1, 'f_' || replace($2, '-', '_'), 'f', 'text') RETURNING id`,
    },
  ];
  const rows: Record<string, string> = {};

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $3), ($2, $4)`, [id.partner, id.otherPartner, `PW ${tag}`, `PW other ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'A'), ($3, $2, 'B')`, [id.orgA, id.partner, id.orgB]);
    for (const k of kinds) rows[k.table] = (await owner.query<{ id: string }>(k.insert, [id.partner, `${tag}-seed`])).rows[0].id;
    await owner.query(`INSERT INTO partner_login_branding (partner_id, headline) VALUES ($1, 'Welcome')`, [id.partner]);
  });
  afterAll(async () => {
    await app.end();
    await owner.end();
  });

  type Reach = 'selected' | 'all';
  /** Runs fn as the application role in a partner-scope transaction of a technician with the given reach. */
  async function asTechnician<T>(reach: Reach, fn: () => Promise<T>): Promise<T> {
    await app.query('BEGIN');
    try {
      await app.query(
        `SELECT set_config('app.scope', 'partner', true), set_config('app.org_ids', $1, true), set_config('app.partner_ids', $2, true),
                set_config('app.user_id', '', true), set_config('app.partner_wide', $3, true)`,
        [reach === 'all' ? `{${id.orgA},${id.orgB}}` : `{${id.orgA}}`, `{${id.partner}}`, reach === 'all' ? 'on' : ''],
      );
      return await fn();
    } finally {
      await app.query('ROLLBACK');
    }
  }

  const denied = { code: '42501', message: expect.stringMatching(/^partner_wide_write_denied/) };

  describe.each(kinds)('$table', ({ table, insert }) => {
    it('refuses a selected-organizations technician to create, change or delete a partner-owned row', async () => {
      await asTechnician('selected', () => expect(app.query(insert, [id.partner, `${tag}-new`])).rejects.toMatchObject(denied));
      const update = () => app.query(`UPDATE ${table} SET name = 'taken over' WHERE id = $1`, [rows[table]]);
      const remove = () => app.query(`DELETE FROM ${table} WHERE id = $1`, [rows[table]]);
      if (table === 'api_keys') {
        // Partner-wide keys are not even visible to such a technician: nothing to change.
        expect(await asTechnician('selected', async () => [(await update()).rowCount, (await remove()).rowCount])).toEqual([0, 0]);
      } else {
        await asTechnician('selected', () => expect(update()).rejects.toMatchObject(denied));
        await asTechnician('selected', () => expect(remove()).rejects.toMatchObject(denied));
      }
      const { rows: left } = await owner.query(`SELECT name FROM ${table} WHERE id = $1`, [rows[table]]);
      expect(left).toHaveLength(1);
      expect(left[0].name).not.toBe('taken over');
    });

    it('lets an all-organizations technician create, change and delete one', async () => {
      const changed = await asTechnician('all', async () => [
        (await app.query(insert, [id.partner, `${tag}-all`])).rowCount,
        (await app.query(`UPDATE ${table} SET name = 'renamed' WHERE id = $1`, [rows[table]])).rowCount,
        (await app.query(`DELETE FROM ${table} WHERE id = $1`, [rows[table]])).rowCount,
      ]);
      expect(changed).toEqual([1, 1, 1]);
    });

    it("answers another partner's row as a row-level-security refusal, not as a partner-wide one", async () => {
      await asTechnician('all', () =>
        expect(app.query(insert, [id.otherPartner, `${tag}-x`])).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/row-level security/) }),
      );
      await asTechnician('all', () => expect(app.query(insert, [id.otherPartner, `${tag}-y`])).rejects.not.toMatchObject(denied));
    });
  });

  it('refuses a selected-organizations technician to change the login branding, and lets an all-organizations one', async () => {
    await asTechnician('selected', () =>
      expect(app.query(`UPDATE partner_login_branding SET headline = 'Phish here' WHERE partner_id = $1`, [id.partner])).rejects.toMatchObject(denied),
    );
    const changed = await asTechnician('all', async () => (await app.query(`UPDATE partner_login_branding SET headline = 'Hi' WHERE partner_id = $1`, [id.partner])).rowCount);
    expect(changed).toBe(1);
  });

  it('hides partner-wide API keys from a selected-organizations technician', async () => {
    const seen = await asTechnician('selected', async () => (await app.query(`SELECT id FROM api_keys WHERE partner_id = $1`, [id.partner])).rows);
    expect(seen).toEqual([]);
    const all = await asTechnician('all', async () => (await app.query(`SELECT id FROM api_keys WHERE id = $1`, [rows.api_keys])).rows);
    expect(all).toEqual([{ id: rows.api_keys }]);
  });

  it("hides the partner's own imports and audit trail from a selected-organizations technician, but not his own actions", async () => {
    const me = (await owner.query<{ id: string }>(`INSERT INTO users (email, name) VALUES ($1, 'Tech') RETURNING id`, [`pw-${tag}@example.com`])).rows[0].id;
    const importId = (
      await owner.query<{ id: string }>(
        `INSERT INTO imports (partner_id, format, dry_run, overwrite, phases, total_items, actor_type, scope, report)
         VALUES ($1, 'interchange', false, false, '{}', 0, 'user', '{}', '{"created":[{"kind":"contact","name":"Org B secret"}]}') RETURNING id`,
        [id.partner],
      )
    ).rows[0].id;
    await owner.query(
      `INSERT INTO audit_logs (partner_id, actor_type, actor_id, actor_user_id, action, details) VALUES
         ($1, 'user', NULL, NULL, 'import.completed', '{"org":"B"}'), ($1, 'user', $2, $2, 'auth.login', '{}')`,
      [id.partner, me],
    );
    const read = (reach: Reach) =>
      asTechnician(reach, async () => {
        await app.query(`SELECT set_config('app.user_id', $1, true)`, [me]);
        return {
          imports: (await app.query(`SELECT id FROM imports WHERE id = $1`, [importId])).rowCount,
          audit: (await app.query<{ action: string }>(`SELECT action FROM audit_logs WHERE partner_id = $1 ORDER BY action`, [id.partner])).rows.map((r) => r.action),
        };
      });
    expect(await read('selected')).toEqual({ imports: 0, audit: ['auth.login'] });
    expect(await read('all')).toEqual({ imports: 1, audit: ['auth.login', 'import.completed'] });
  });

  it('guards every table whose rows a partner can own', async () => {
    // A table is partner-ownable when it has a partner_id column and its org_id, if any, may be NULL.
    const { rows: ownable } = await owner.query<{ relname: string; guarded: boolean }>(
      `SELECT c.relname,
              EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'partner_wide_write') AS guarded
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
         JOIN pg_attribute p ON p.attrelid = c.oid AND p.attname = 'partner_id' AND NOT p.attisdropped
         LEFT JOIN pg_attribute o ON o.attrelid = c.oid AND o.attname = 'org_id' AND NOT o.attisdropped
        WHERE c.relkind = 'r' AND (o.attname IS NULL OR NOT o.attnotnull)
        ORDER BY c.relname`,
    );
    // Not partner-wide objects: an organization's own row; sessions, sign-in state and the audit
    // trail, written in system context or for the caller itself; memberships and invitations to
    // them, governed by the membership service's escalation checks.
    const notObjects = new Set([
      'organizations',
      'sessions',
      'audit_logs',
      'partner_memberships',
      'partner_membership_orgs',
      'partner_membership_sites',
      'membership_invitations',
      'sso_sessions',
      'user_sso_identities',
      'saml_request_cache',
      'saml_consumed_assertions',
      'sso_exchange_codes',
      'sso_login_sessions',
      // Sign-out state: what each SSO session's IdP will name at logout, and back-channel logout
      // tokens already accepted; written by sign-in and logout in system context.
      'sso_session_links',
      'sso_logout_tokens_seen',
    ]);
    const unguarded = ownable.filter((t) => !t.guarded && !notObjects.has(t.relname)).map((t) => t.relname);
    expect(unguarded).toEqual([]);
    expect(ownable.filter((t) => t.guarded).map((t) => t.relname)).toEqual(
      expect.arrayContaining(['api_keys', 'roles', 'sso_providers', 'scripts', 'policies', 'policy_assignments', 'custom_field_definitions', 'partner_login_branding']),
    );
  });
});
