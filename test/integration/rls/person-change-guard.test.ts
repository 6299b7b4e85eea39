import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Client } from 'pg';
import { mayActOn, Reach } from '../../support/person-authority.model';

/**
 * Acting on a person, in the database alone: the application role, with a request's settings and
 * no service code in between, changes people; the guard refuses every change its actor has no
 * authority for, so a path that forgets to ask the rule fails closed. And the rule itself
 * (app_may_act_on) agrees with the plain model of it on generated tenancies.
 */
describe('the person-change guard in the database', () => {
  let owner: Client;
  let app: Client;
  const tag = randomBytes(4).toString('hex');
  const id = {
    partner: randomUUID(),
    org: randomUUID(),
    site1: randomUUID(),
    site2: randomUUID(),
    ownerRole: randomUUID(),
    writerRole: randomUUID(),
    viewerRole: randomUUID(),
    owner: randomUUID(),
    mallory: randomUUID(),
    viewer: randomUUID(),
  };

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $2)`, [id.partner, `Guard ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'Org')`, [id.org, id.partner]);
    await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $3, 'S1'), ($2, $3, 'S2')`, [id.site1, id.site2, id.org]);
    await owner.query(
      `INSERT INTO roles (id, scope, org_id, name, permissions) VALUES ($1, 'organization', $4, 'Owner', '{*}'),
         ($2, 'organization', $4, 'Writer', '{organizations:read,organizations:write}'), ($3, 'organization', $4, 'Viewer', '{organizations:read}')`,
      [id.ownerRole, id.writerRole, id.viewerRole, id.org],
    );
    await owner.query(`INSERT INTO users (id, email, name) VALUES ($1, $4, 'Owner'), ($2, $5, 'Mallory'), ($3, $6, 'Viewer')`, [
      id.owner,
      id.mallory,
      id.viewer,
      `owner-${tag}@guard.example`,
      `mallory-${tag}@guard.example`,
      `viewer-${tag}@guard.example`,
    ]);
    await owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $5), ($1, $3, $6), ($1, $4, $7)`, [
      id.org,
      id.owner,
      id.mallory,
      id.viewer,
      id.ownerRole,
      id.writerRole,
      id.viewerRole,
    ]);
  });
  afterAll(async () => {
    await app.end();
    await owner.end();
  });

  /** Runs fn as the application role in a transaction of the given scope, with `actor` as the person the request acts for. */
  async function as<T>(actor: string | null, scope: 'organization' | 'system', fn: () => Promise<T>): Promise<T> {
    await app.query('BEGIN');
    try {
      await app.query(
        `SELECT set_config('app.scope', $1, true), set_config('app.org_ids', $2, true), set_config('app.partner_ids', '{}', true),
                set_config('app.user_id', $3, true), set_config('app.actor_id', $3, true)`,
        [scope, scope === 'system' ? '{}' : `{${id.org}}`, actor ?? ''],
      );
      return await fn();
    } finally {
      await app.query('ROLLBACK');
    }
  }
  const refused = (p: Promise<unknown>) => expect(p).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/^person_out_of_reach/) });

  it("refuses a writer's change of the owner's role, suspension and membership, whatever the scope", async () => {
    for (const scope of ['organization', 'system'] as const) {
      await as(id.mallory, scope, () => refused(app.query(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [id.org, id.owner, id.viewerRole])));
      await as(id.mallory, scope, () => refused(app.query(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [id.org, id.owner])));
      await as(id.mallory, scope, () => refused(app.query(`DELETE FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [id.org, id.owner])));
      await as(id.mallory, scope, () => refused(app.query(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) VALUES ($1, $2, $3)`, [id.org, id.owner, id.site1])));
    }
  });

  it("refuses a writer's change of the owner's email, name, password or status", async () => {
    for (const set of [`email = 'mallory@evil.example'`, `name = 'Pwned'`, `password_hash = 'x'`, `totp_secret = 'JBSWY3DPEHPK3PXP'`, `status = 'disabled'`]) {
      await as(id.mallory, 'system', () => refused(app.query(`UPDATE users SET ${set} WHERE id = $1`, [id.owner])));
    }
  });

  it('refuses raising oneself to a role one cannot grant, and allows acting on a person one covers', async () => {
    await as(id.mallory, 'organization', () => refused(app.query(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [id.org, id.mallory, id.ownerRole])));
    await as(id.mallory, 'organization', async () => {
      expect((await app.query(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [id.org, id.viewer])).rowCount).toBe(1);
    });
    await as(id.owner, 'organization', async () => {
      expect((await app.query(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [id.org, id.mallory, id.viewerRole])).rowCount).toBe(1);
    });
  });

  it('lets a person change their own account, and a change without an actor (sign-in, jobs) is left to the services', async () => {
    await as(id.viewer, 'system', async () => {
      expect((await app.query(`UPDATE users SET name = 'Me' WHERE id = $1`, [id.viewer])).rowCount).toBe(1);
    });
    await as(null, 'system', async () => {
      expect((await app.query(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [id.org, id.owner])).rowCount).toBe(1);
    });
  });

  it('app_may_act_on agrees with the plain model on generated roles and site restrictions', async () => {
    const universe = ['*', 'devices:*', 'devices:read', 'devices:write', 'users:write', 'organizations:read', 'organizations:write'];
    const person = fc.record({
      permissions: fc.subarray(universe, { minLength: 0, maxLength: 3 }),
      sites: fc.option(fc.subarray(['site1', 'site2'] as const), { nil: null }),
      suspended: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(person, person, async (a, b) => {
        const org = randomUUID();
        const sites = { site1: randomUUID(), site2: randomUUID() };
        const [actor, target] = [randomUUID(), randomUUID()];
        await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'P')`, [org, id.partner]);
        await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $3, 'S1'), ($2, $3, 'S2')`, [sites.site1, sites.site2, org]);
        for (const [who, p] of [[actor, a], [target, b]] as const) {
          const role = randomUUID();
          await owner.query(`INSERT INTO roles (id, scope, org_id, name, permissions) VALUES ($1, 'organization', $2, $3, $4)`, [role, org, `r-${who}`, p.permissions]);
          await owner.query(`INSERT INTO users (id, email) VALUES ($1, $2)`, [who, `${who}@model.example`]);
          await owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id, site_restricted, suspended_at) VALUES ($1, $2, $3, $4, $5)`, [
            org,
            who,
            role,
            p.sites !== null,
            p.suspended ? new Date() : null,
          ]);
          for (const s of p.sites ?? []) await owner.query(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) VALUES ($1, $2, $3)`, [org, who, sites[s]]);
        }
        const reach = (p: typeof a): Reach => ({ permissions: p.permissions, orgIds: [org], siteIds: p.sites === null ? null : p.sites.map((s) => sites[s]) });
        const expected = mayActOn(a.suspended ? [] : [reach(a)], reach(b));
        const actual = await as(actor, 'organization', async () => (await app.query<{ ok: boolean }>(`SELECT app_may_act_on($1, $2, $3, NULL) AS ok`, [actor, target, org])).rows[0].ok);
        await owner.query(`DELETE FROM organizations WHERE id = $1`, [org]);
        await owner.query(`DELETE FROM users WHERE id = ANY ($1::uuid[])`, [[actor, target]]);
        expect(actual).toBe(expected);
      }),
      { numRuns: 60 },
    );
  });
});
