import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import type { BenchContext, Scenario } from '../bench.types';

/**
 * SCIM as an IdP's first sync drives it (docs/identity-lifecycle.md): Okta's initial import of
 * users is, per user, a lookup by userName (`filter=userName eq "…"&startIndex=1&count=100`, none
 * found) and a POST, four users at a time. Then a group push adding 1,000 of them in one PATCH.
 * Beside the sync: the same work shape without the service (node + pg, four connections, a lookup
 * by lower(email) and one INSERT per user), in this run.
 * BENCH_SCIM_USERS (default 10,000) sizes the sync.
 */
const USERS = Number(process.env.BENCH_SCIM_USERS ?? 10_000);
const LANES = 4;
const SCIM = 'application/scim+json';

async function lanes(count: number, work: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      for (let i = next++; i < count; i = next++) await work(i);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function bare(appUrl: string, label: string, count: number): Promise<number> {
  const pool = new Pool({ connectionString: appUrl, max: LANES });
  try {
    const seconds = await lanes(count, async (i) => {
      await pool.query('SELECT 1 FROM users WHERE email_lower = lower($1::text)', [`bare-${i}@${label}.example`]);
      await pool.query('INSERT INTO bench_baseline (payload) VALUES ($1)', [`user ${i}`]);
    });
    return count / seconds;
  } finally {
    await pool.end();
  }
}

async function run(ctx: BenchContext) {
  const label = randomBytes(3).toString('hex');
  const domain = `scim-${label}.bench.example`;
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `SCIM bench partner ${label}` }],
    organizations: [{ key: 'o', partner: 'p', name: `SCIM bench org ${label}` }],
    roles: [
      { key: 'admin', scope: 'organization', organization: 'o', name: 'Admin', permissions: ['*'] },
      { key: 'member', scope: 'organization', organization: 'o', name: 'Member', permissions: ['devices:read'] },
    ],
    users: [{ key: 'u', email: `admin@${domain}`, name: 'Admin', totpSecret: 'JBSWY3DPEHPK3PXP', memberships: [{ organization: 'o', role: 'admin' }] }],
  });
  await ctx.ownerQuery(`INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now())`, [ids.o, domain]);
  const bearer = await ctx.token(ids.u, { mfa: true });
  const made = await fetch(`${ctx.baseUrl}/api/v1/scim/connections`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench IdP', defaultRoleId: ids.member }),
  });
  if (made.status !== 201) throw new Error(`creating the connection answered ${made.status}`);
  const token = ((await made.json()) as { token: string }).token;
  const base = `${ctx.baseUrl}/api/v1/scim/v2`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': SCIM, accept: SCIM };

  const userIds: string[] = new Array(USERS);
  const syncSeconds = await lanes(USERS, async (i) => {
    const email = `user${i}@${domain}`;
    const lookup = await fetch(`${base}/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`, { headers });
    if (((await lookup.json()) as { totalResults: number }).totalResults !== 0) throw new Error(`lookup of ${email} found a user`);
    const created = await fetch(`${base}/Users`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: email,
        name: { givenName: 'User', familyName: String(i) },
        emails: [{ primary: true, value: email, type: 'work' }],
        displayName: `User ${i}`,
        externalId: `okta-${i}`,
        active: true,
      }),
    });
    if (created.status !== 201) throw new Error(`POST /Users answered ${created.status}: ${(await created.text()).slice(0, 200)}`);
    userIds[i] = ((await created.json()) as { id: string }).id;
  });
  const bareUsersPerSecond = await bare(ctx.serviceEnv.DATABASE_APP_URL, label, Math.min(USERS, 4000));

  const group = await fetch(`${base}/Groups`, { method: 'POST', headers, body: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: `Bench ${label}` }) });
  const groupId = ((await group.json()) as { id: string }).id;
  const members = userIds.slice(0, 1000).map((value) => ({ value }));
  const started = process.hrtime.bigint();
  const patched = await fetch(`${base}/Groups/${groupId}`, {
    method: 'PATCH',
    headers,
    body: JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: members }] }),
  });
  const patchMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (patched.status !== 204) throw new Error(`PATCH /Groups answered ${patched.status}`);

  const round = (x: number) => Math.round(x * 10) / 10;
  return [
    {
      scenario: `SCIM: Okta-style initial sync, ${USERS.toLocaleString('en')} users (lookup + POST each, ${LANES} at a time)`,
      value: round(USERS / syncSeconds),
      unit: 'users/s',
      target: '≥ 250 users/s',
      baseline: { value: round(bareUsersPerSecond), label: `bare node + pg, lookup + INSERT per user, ${LANES} connections (${round(bareUsersPerSecond)} users/s)` },
    },
    { scenario: 'SCIM: one group PATCH adding 1,000 members (answered 204)', value: round(patchMs), unit: 'ms', target: '< 300 ms' },
  ];
}

export const scenario: Scenario = {
  name: 'SCIM: initial sync and a 1,000-member group push',
  order: 85,
  async prepare(ctx) {
    return { kind: 'custom', rows: await run(ctx) };
  },
};
