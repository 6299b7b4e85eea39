import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

interface Context {
  name: string;
  scope: 'organization' | 'partner';
  orgIds: string[];
  partnerIds: string[];
  /** All-organization access: may write the partner's own rows. */
  partnerWide?: boolean;
}

/**
 * Tenant isolation enforced by PostgreSQL itself, seen through the application role: each
 * tenant context reads and changes only its own rows, a transaction without settings sees
 * nothing, and writes into another tenant are refused or affect nothing.
 */
describe('row-level security isolation between tenants', () => {
  let owner: Client;
  let app: Client;
  const id = {
    partner1: randomUUID(),
    partner2: randomUUID(),
    orgA: randomUUID(),
    orgB: randomUUID(),
    siteA: randomUUID(),
    siteB: randomUUID(),
    deviceA: randomUUID(),
    deviceB: randomUUID(),
    roleA: randomUUID(),
    roleB: randomUUID(),
    roleP1: randomUUID(),
    roleP2: randomUUID(),
  };

  // Partner 1 owns org A and partner 2 owns org B, so each context reaches exactly one side.
  const contexts: Record<'orgA' | 'orgB' | 'partner1' | 'partner2', Context> = {
    orgA: { name: 'organization A', scope: 'organization', orgIds: [id.orgA], partnerIds: [] },
    orgB: { name: 'organization B', scope: 'organization', orgIds: [id.orgB], partnerIds: [] },
    partner1: { name: 'partner 1', scope: 'partner', orgIds: [id.orgA], partnerIds: [id.partner1], partnerWide: true },
    partner2: { name: 'partner 2', scope: 'partner', orgIds: [id.orgB], partnerIds: [id.partner2], partnerWide: true },
  };

  // What each context owns, and what belongs to the other side.
  const own = {
    orgA: { sites: [id.siteA], devices: [id.deviceA], roles: [id.roleA] },
    orgB: { sites: [id.siteB], devices: [id.deviceB], roles: [id.roleB] },
    partner1: { sites: [id.siteA], devices: [id.deviceA], roles: [id.roleA, id.roleP1] },
    partner2: { sites: [id.siteB], devices: [id.deviceB], roles: [id.roleB, id.roleP2] },
  };
  const otherSide = { orgA: 'orgB', orgB: 'orgA', partner1: 'partner2', partner2: 'partner1' } as const;
  const all = { sites: [id.siteA, id.siteB], devices: [id.deviceA, id.deviceB], roles: [id.roleA, id.roleB, id.roleP1, id.roleP2] };

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    const tag = id.orgA.slice(0, 8);
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $3), ($2, $4)`, [id.partner1, id.partner2, `RLS P1 ${tag}`, `RLS P2 ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'RLS A'), ($3, $4, 'RLS B')`, [id.orgA, id.partner1, id.orgB, id.partner2]);
    await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $2, 'Site A'), ($3, $4, 'Site B')`, [id.siteA, id.orgA, id.siteB, id.orgB]);
    await owner.query(`INSERT INTO devices (id, org_id, site_id, hostname) VALUES ($1, $2, $3, 'HOST-A'), ($4, $5, $6, 'HOST-B')`, [
      id.deviceA,
      id.orgA,
      id.siteA,
      id.deviceB,
      id.orgB,
      id.siteB,
    ]);
    await owner.query(
      `INSERT INTO roles (id, scope, org_id, partner_id, name, permissions) VALUES
         ($1, 'organization', $2, NULL, 'Role A', '{*}'), ($3, 'organization', $4, NULL, 'Role B', '{*}'),
         ($5, 'partner', NULL, $6, 'Role P1', '{*}'), ($7, 'partner', NULL, $8, 'Role P2', '{*}')`,
      [id.roleA, id.orgA, id.roleB, id.orgB, id.roleP1, id.partner1, id.roleP2, id.partner2],
    );
  });
  afterAll(async () => {
    await app.end();
    await owner.end();
  });

  /** Runs fn as the application role inside BEGIN … ROLLBACK with the context's transaction-local settings. */
  async function inContext<T>(ctx: Context | null, fn: () => Promise<T>): Promise<T> {
    await app.query('BEGIN');
    try {
      if (ctx) {
        await app.query(
          `SELECT set_config('app.scope', $1, true), set_config('app.org_ids', $2, true),
                  set_config('app.partner_ids', $3, true), set_config('app.user_id', '', true), set_config('app.partner_wide', $4, true)`,
          [ctx.scope, `{${ctx.orgIds.join(',')}}`, `{${ctx.partnerIds.join(',')}}`, ctx.partnerWide ? 'on' : ''],
        );
      }
      return await fn();
    } finally {
      await app.query('ROLLBACK');
    }
  }

  const visible = async (table: 'sites' | 'devices' | 'roles', ids: string[]) =>
    (await app.query<{ id: string }>(`SELECT id FROM ${table} WHERE id = ANY($1::uuid[]) ORDER BY id`, [ids])).rows.map((r) => r.id);

  const names = ['orgA', 'orgB', 'partner1', 'partner2'] as const;

  describe.each(names)('in the %s context', (key) => {
    const ctx = () => contexts[key];
    const mine = () => own[key];
    const theirs = () => own[otherSide[key]];

    it.each(['sites', 'devices', 'roles'] as const)('sees its own %s and none of the other tenant', async (table) => {
      const seen = await inContext(ctx(), () => visible(table, all[table]));
      expect(seen).toEqual([...mine()[table]].sort());
    });

    it('changes its own sites, devices and roles', async () => {
      const changed = await inContext(ctx(), async () => [
        (await app.query(`UPDATE sites SET name = name || ' (renamed)' WHERE id = ANY($1::uuid[])`, [mine().sites])).rowCount,
        (await app.query(`UPDATE devices SET hostname = 'RENAMED' WHERE id = ANY($1::uuid[])`, [mine().devices])).rowCount,
        (await app.query(`UPDATE roles SET permissions = '{}' WHERE id = ANY($1::uuid[])`, [mine().roles])).rowCount,
        (await app.query(`DELETE FROM devices WHERE id = ANY($1::uuid[])`, [mine().devices])).rowCount,
      ]);
      expect(changed).toEqual([mine().sites.length, mine().devices.length, mine().roles.length, mine().devices.length]);
    });

    it('updates and deletes none of the other tenant rows', async () => {
      const changed = await inContext(ctx(), async () => [
        (await app.query(`UPDATE sites SET name = 'hijacked' WHERE id = ANY($1::uuid[])`, [theirs().sites])).rowCount,
        (await app.query(`UPDATE devices SET hostname = 'hijacked' WHERE id = ANY($1::uuid[])`, [theirs().devices])).rowCount,
        (await app.query(`UPDATE roles SET permissions = '{}' WHERE id = ANY($1::uuid[])`, [theirs().roles])).rowCount,
        (await app.query(`DELETE FROM devices WHERE id = ANY($1::uuid[])`, [theirs().devices])).rowCount,
        (await app.query(`DELETE FROM roles WHERE id = ANY($1::uuid[])`, [theirs().roles])).rowCount,
      ]);
      expect(changed).toEqual([0, 0, 0, 0, 0]);
      const { rows } = await owner.query(`SELECT name FROM sites WHERE id = ANY($1::uuid[]) AND name = 'hijacked'`, [theirs().sites]);
      expect(rows).toEqual([]);
    });
  });

  const refusal = { code: '42501', message: expect.stringMatching(/new row violates row-level security policy/) };

  it('refuses a site inserted with the other organization id', async () => {
    await inContext(contexts.orgA, async () => {
      await expect(app.query(`INSERT INTO sites (org_id, name) VALUES ($1, 'Planted')`, [id.orgB])).rejects.toMatchObject(refusal);
    });
    expect((await owner.query(`SELECT 1 FROM sites WHERE org_id = $1 AND name = 'Planted'`, [id.orgB])).rows).toEqual([]);
  });

  it('refuses a device inserted into the other organization', async () => {
    await inContext(contexts.partner1, async () => {
      await expect(app.query(`INSERT INTO devices (org_id, site_id, hostname) VALUES ($1, $2, 'PLANTED')`, [id.orgB, id.siteB])).rejects.toMatchObject(refusal);
    });
  });

  it('refuses a role created for another organization or another partner', async () => {
    await inContext(contexts.orgB, async () => {
      await expect(app.query(`INSERT INTO roles (scope, org_id, name) VALUES ('organization', $1, 'Planted')`, [id.orgA])).rejects.toMatchObject(refusal);
    });
    await inContext(contexts.partner1, async () => {
      await expect(app.query(`INSERT INTO roles (scope, partner_id, name) VALUES ('partner', $1, 'Planted')`, [id.partner2])).rejects.toMatchObject(refusal);
    });
  });

  it('refuses moving an own row into the other tenant', async () => {
    await inContext(contexts.orgA, async () => {
      await expect(app.query(`UPDATE roles SET org_id = $1 WHERE id = $2`, [id.orgB, id.roleA])).rejects.toMatchObject(refusal);
    });
  });

  it('sees nothing in any tenant table from a transaction without settings', async () => {
    const { rows: tables } = await owner.query<{ relname: string }>(
      `SELECT DISTINCT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('org_id', 'partner_id', 'user_id') AND NOT a.attisdropped
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
          AND (a.attname IS NOT NULL OR c.relname IN ('partners', 'organizations', 'users'))
        ORDER BY c.relname`,
    );
    expect(tables.map((t) => t.relname)).toEqual(expect.arrayContaining(['partners', 'organizations', 'users', 'sites', 'devices', 'roles', 'agents', 'audit_logs']));
    const counts = await inContext(null, async () => {
      const out: Record<string, number> = {};
      for (const { relname } of tables) {
        const readable = await app.query<{ ok: boolean }>(`SELECT has_table_privilege(current_user, $1, 'SELECT') AS ok`, [`public.${relname}`]);
        if (!readable.rows[0].ok) continue;
        out[relname] = (await app.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${app.escapeIdentifier(relname)}`)).rows[0].n;
      }
      return out;
    });
    expect(Object.entries(counts).filter(([, n]) => n > 0)).toEqual([]);
    // the rows are there: the owner sees them
    const seeded = await owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM sites WHERE id = ANY($1::uuid[])`, [all.sites]);
    expect(seeded.rows[0].n).toBe(2);
  });

  it('writes nothing from a transaction without settings', async () => {
    await inContext(null, async () => {
      expect((await app.query(`UPDATE sites SET name = 'nobody' WHERE id = ANY($1::uuid[])`, [all.sites])).rowCount).toBe(0);
      await expect(app.query(`INSERT INTO sites (org_id, name) VALUES ($1, 'Nobody')`, [id.orgA])).rejects.toMatchObject(refusal);
    });
  });
});
