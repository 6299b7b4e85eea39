import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';

/**
 * `app_warm_connection(n)` (migration 1763702600000), which PoolWarmer runs on each new
 * connection before the instance listens: it runs the agent hot path's functions against a real
 * device and leaves nothing behind. Talks to PostgreSQL as the application role with no service
 * code in between.
 */
describe('warming a connection in the database', () => {
  let owner: Client;
  let app: Client;
  const id = { partner: randomUUID(), org: randomUUID(), site: randomUUID(), device: randomUUID(), agent: randomUUID() };
  const tag = randomBytes(4).toString('hex');

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $2)`, [id.partner, `Warm ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'Warm org')`, [id.org, id.partner]);
    await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $2, 'Warm site')`, [id.site, id.org]);
    await owner.query(`INSERT INTO devices (id, org_id, site_id, hostname) VALUES ($1, $2, $3, 'WARM-1')`, [id.device, id.org, id.site]);
    const tokenHash = createHash('sha256').update(`warm-${tag}`).digest('hex');
    await owner.query(`INSERT INTO agents (id, org_id, device_id, token_hash) VALUES ($1, $2, $3, $4)`, [id.agent, id.org, id.device, tokenHash]);
  });
  afterAll(async () => {
    await app.end();
    await owner.query(`DELETE FROM partners WHERE id = $1`, [id.partner]).catch(() => undefined);
    await owner.end();
  });

  /**
   * Calls the function as the application role and commits: in system scope, in this test's
   * organization only (so that the device it works on is this test's), or with no settings.
   */
  async function warm(n: number, scope: 'system' | 'this organization' | 'none'): Promise<number> {
    await app.query('BEGIN');
    try {
      if (scope !== 'none') {
        await app.query(
          `SELECT set_config('app.scope', $1, true), set_config('app.org_ids', $2, true), set_config('app.partner_ids', '{}', true),
                  set_config('app.user_id', '', true), set_config('app.partner_wide', '', true), set_config('app.site_ids', '', true), set_config('app.actor_id', '', true)`,
          scope === 'system' ? ['system', '{}'] : ['organization', `{${id.org}}`],
        );
      }
      const { rows } = await app.query<{ ran: number }>(`SELECT app_warm_connection($1) AS ran`, [n]);
      await app.query('COMMIT');
      return rows[0].ran;
    } catch (e) {
      await app.query('ROLLBACK');
      throw e;
    }
  }

  /** What the hot path would have written anywhere in the database, for the org of this test. */
  async function writes(): Promise<Record<string, number>> {
    const { rows } = await owner.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM elevation_requests WHERE org_id = $1) AS requests,
              (SELECT count(*)::int FROM audit_logs WHERE org_id = $1) AS audit,
              (SELECT count(*)::int FROM pam_elevation_events WHERE org_id = $1) AS events,
              (SELECT count(*)::int FROM agent_rate_buckets WHERE org_id = $1) AS buckets,
              (SELECT count(*)::int FROM pam_approval_requests WHERE org_id = $1) AS approvals`,
      [id.org],
    );
    return rows[0];
  }

  it('runs the hot functions on a device and leaves no request, audit row, event, bucket or approval behind', async () => {
    const before = await writes();
    expect(await warm(0, 'this organization')).toBe(5);
    expect(await writes()).toEqual(before);
    expect(before).toEqual({ requests: 0, audit: 0, events: 0, buckets: 0, approvals: 0 });
  });

  it('works on the first device when asked for a device past the last, so a large pool on a small fleet still warms', async () => {
    expect(await warm(1_000_000, 'this organization')).toBe(5);
    expect(await warm(1_000_000, 'system')).toBe(5);
    expect(await writes()).toEqual({ requests: 0, audit: 0, events: 0, buckets: 0, approvals: 0 });
  });

  it('sees no device and runs nothing without system scope: the warm-up crosses tenants only through the system-context path', async () => {
    expect(await warm(0, 'none')).toBe(0);
  });
});
