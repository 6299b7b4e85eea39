import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

/**
 * Issue 13 item 14a: `sso_sessions` holds each sign-in round trip's state, nonce, PKCE code
 * verifier and post-login target. Only the public sign-in routes use it, in system context, so
 * a tenant-scoped transaction, even of the organization or partner that owns the row, neither
 * reads nor changes it.
 */
describe('row-level security of SSO login sessions', () => {
  let owner: Client;
  let app: Client;
  const id = { partner: randomUUID(), org: randomUUID(), orgProvider: randomUUID(), partnerProvider: randomUUID() };
  const states = { org: `org-${randomUUID()}`, partner: `partner-${randomUUID()}` };

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $2)`, [id.partner, `SSO RLS ${id.partner.slice(0, 8)}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'SSO RLS org')`, [id.org, id.partner]);
    await owner.query(
      `INSERT INTO sso_providers (id, org_id, partner_id, name, type, auto_provision) VALUES ($1, $2, NULL, 'Org IdP', 'oidc', true), ($3, NULL, $4, 'Partner IdP', 'oidc', false)`,
      [id.orgProvider, id.org, id.partnerProvider, id.partner],
    );
    await owner.query(
      `INSERT INTO sso_sessions (org_id, partner_id, provider_id, state, nonce, code_verifier, generation, expires_at)
       VALUES ($1, NULL, $2, $3, 'n', 'verifier-org', 1, now() + interval '10 minutes'),
              (NULL, $4, $5, $6, 'n', 'verifier-partner', 1, now() + interval '10 minutes')`,
      [id.org, id.orgProvider, states.org, id.partner, id.partnerProvider, states.partner],
    );
  });
  afterAll(async () => {
    await owner.query(`DELETE FROM organizations WHERE id = $1`, [id.org]);
    await owner.query(`DELETE FROM partners WHERE id = $1`, [id.partner]);
    await app.end();
    await owner.end();
  });

  async function inScope<T>(scope: 'organization' | 'partner' | 'system', fn: () => Promise<T>): Promise<T> {
    await app.query('BEGIN');
    try {
      await app.query(
        `SELECT set_config('app.scope', $1, true), set_config('app.org_ids', $2, true),
                set_config('app.partner_ids', $3, true), set_config('app.user_id', '', true), set_config('app.partner_wide', 'on', true)`,
        [scope, scope === 'system' ? '{}' : `{${id.org}}`, scope === 'partner' ? `{${id.partner}}` : '{}'],
      );
      return await fn();
    } finally {
      await app.query('ROLLBACK');
    }
  }

  const verifiers = async () =>
    (await app.query<{ code_verifier: string }>(`SELECT code_verifier FROM sso_sessions WHERE state = ANY($1) ORDER BY code_verifier`, [[states.org, states.partner]])).rows.map(
      (r) => r.code_verifier,
    );

  it('a tenant-scoped transaction of the owning organization cannot SELECT its login sessions', async () => {
    expect(await inScope('organization', verifiers)).toEqual([]);
  });

  it('a tenant-scoped transaction of the owning partner cannot SELECT its login sessions', async () => {
    expect(await inScope('partner', verifiers)).toEqual([]);
  });

  it('neither changes nor deletes them, nor inserts one', async () => {
    for (const scope of ['organization', 'partner'] as const) {
      const changed = await inScope(scope, async () => [
        (await app.query(`UPDATE sso_sessions SET redirect_url = '//evil.example' WHERE state = ANY($1)`, [[states.org, states.partner]])).rowCount,
        (await app.query(`DELETE FROM sso_sessions WHERE state = ANY($1)`, [[states.org, states.partner]])).rowCount,
      ]);
      expect(changed).toEqual([0, 0]);
      await expect(
        inScope(scope, () =>
          app.query(
            `INSERT INTO sso_sessions (org_id, provider_id, state, nonce, code_verifier, generation, expires_at) VALUES ($1, $2, $3, 'n', 'v', 1, now() + interval '1 minute')`,
            [id.org, id.orgProvider, `forged-${randomUUID()}`],
          ),
        ),
      ).rejects.toThrow(/row-level security/);
    }
  });

  it('system context, which the public sign-in routes use, reads them', async () => {
    expect(await inScope('system', verifiers)).toEqual(['verifier-org', 'verifier-partner']);
  });
});
