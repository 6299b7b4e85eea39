import { randomBytes, randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import request from 'supertest';
import type { Fixture } from '../../../src/seed/fixture.types';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { PASSWORD, TOTP_SECRET } from '../../factories/tenant.factory';
import { TestDnsServer } from '../../support/dns/test-dns-server';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * The one world the authorization matrix runs in: two partners, the eight callers of the matrix
 * and the objects the operations read. Operations that change or delete create their own target
 * per cell (see the table), so every caller meets an equivalent, untouched object.
 */

export const CALLERS = ['anonymous', 'customer', 'orgTech', 'allTech', 'partnerAdmin', 'apiKey', 'agent', 'otherPartner'] as const;
export type CallerName = (typeof CALLERS)[number];

/** What each caller is, in the words of the test names. */
export const CALLER_NAMES: Record<CallerName, string> = {
  anonymous: 'an anonymous caller',
  customer: "the customer's organization administrator",
  orgTech: 'the organization-limited technician',
  allTech: 'the all-organization technician with a limited role',
  partnerAdmin: 'the partner administrator',
  apiKey: "the partner administrator's partner-wide API key",
  agent: "device A1's agent",
  otherPartner: "another partner's administrator",
};

/** The all-organization technician's role: enough to run devices, nothing to administer the partner. */
export const LIMITED_TECH_PERMISSIONS = ['devices:read', 'devices:write', 'devices:execute', 'organizations:read', 'users:read', 'audit:read'];

export const MFA_USERS = 8;

export interface Api {
  get(path: string, query?: Record<string, unknown>): Promise<request.Response>;
  post(path: string, body?: unknown): Promise<request.Response>;
  put(path: string, body?: unknown): Promise<request.Response>;
  patch(path: string, body?: unknown): Promise<request.Response>;
  delete(path: string): Promise<request.Response>;
  /** POST, PUT or PATCH that must succeed; returns the body. */
  create(path: string, body?: unknown, method?: 'post' | 'put' | 'patch'): Promise<Record<string, any>>;
}

export interface ElevationSeed {
  org?: 'orgA' | 'orgB';
  status?: 'pending' | 'approved';
  flowType?: 'uac_intercept' | 'tech_jit_admin';
  subjectUserId?: string | null;
}

export interface MatrixContext {
  t: TestApp;
  dns: TestDnsServer;
  /** Fixture ids, and the shared objects prepared after seeding (providers, scripts, policies, …). */
  ids: Record<string, string>;
  /** The agent id (the `:id` of /agents/:id/…) of a fixture device. */
  agentId(device: 'deviceA1' | 'deviceA2' | 'deviceB1'): string;
  /** The person a caller acts for: the user, or the API key's creator; null for anonymous and the agent. */
  userId(caller: CallerName): string | null;
  /** The email of a fixture user. */
  emailOf(userKey: string): string;
  /** The caller's credential in every cell; null for anonymous. */
  bearer(caller: CallerName): string | null;
  /** A new session for a person (the same credential for the others), for cells that end or spend it. */
  freshBearer(caller: CallerName): Promise<string | null>;
  /** Mints new sessions for every person after a cell that ended their other sessions. */
  remint(caller: CallerName): Promise<void>;
  /** The API as the partner administrator (setups), or as any bearer. */
  admin: Api;
  otherAdmin: Api;
  api(bearer: string | null): Api;
  /** The owner connection, for setups no route exists for. */
  sql<T = Record<string, any>>(text: string, params?: unknown[]): Promise<T[]>;
  uniq(label: string): string;
  /** An elevation request written as agent ingest would have. */
  elevation(seed?: ElevationSeed): Promise<string>;
  /** A pending approval request, addressed to this person, of a fresh pending request of organization A (a prompt unless told). */
  approvalFor(userId: string | null, request?: ElevationSeed): Promise<string>;
  /** A reset token, as mailed by forgot-password, for the reset user. */
  resetToken(): Promise<string>;
  /** A fresh MFA challenge of one of the MFA users, and the TOTP code that answers it. */
  mfaChallenge(): Promise<{ mfaToken: string; code: string }>;
  close(): Promise<void>;
}

const uniq = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

/** Two partners: P with organizations A (sites A1, A2) and B (site B1), and Q with one organization. */
export function matrixFixture(label = uniq('matrix')): Fixture & { emails: Record<string, string> } {
  const domain = `${label}.example`;
  const email = (who: string) => `${who}@${domain}`;
  const people = ['customer', 'orgTech', 'allTech', 'partnerAdmin', 'memberA', 'memberB', 'memberAB', 'loginUser', 'resetUser', 'otherPartner', 'otherMember'];
  const emails = Object.fromEntries(people.map((p) => [p, email(p.toLowerCase())]));
  for (let i = 0; i < MFA_USERS; i++) emails[`mfaUser${i}`] = email(`mfa-${i}`);
  const agent = (key: string) => ({ agentId: randomUUID(), agentToken: `agent-${label}-${key}` });
  return {
    emails,
    partners: [
      { key: 'partner', name: `Partner ${label}` },
      { key: 'partnerQ', name: `Partner Q ${label}` },
    ],
    organizations: [
      { key: 'orgA', partner: 'partner', name: `Org A ${label}` },
      { key: 'orgB', partner: 'partner', name: `Org B ${label}` },
      { key: 'orgQ', partner: 'partnerQ', name: `Org Q ${label}` },
      // Tenants that invite the callers (invitations are answered by the invitee).
      { key: 'orgInviteAccept', partner: 'partnerQ', name: `Inviting org 1 ${label}` },
      { key: 'orgInviteDecline', partner: 'partnerQ', name: `Inviting org 2 ${label}` },
    ],
    sites: [
      { key: 'siteA1', organization: 'orgA', name: 'A1', timezone: 'Europe/Paris' },
      { key: 'siteA2', organization: 'orgA', name: 'A2' },
      { key: 'siteB1', organization: 'orgB', name: 'B1' },
      { key: 'siteQ1', organization: 'orgQ', name: 'Q1' },
    ],
    deviceGroups: [
      { key: 'groupA1', organization: 'orgA', site: 'siteA1', name: 'Workstations A' },
      { key: 'groupB1', organization: 'orgB', site: 'siteB1', name: 'Workstations B' },
    ],
    devices: [
      { key: 'deviceA1', organization: 'orgA', site: 'siteA1', groups: ['groupA1'], hostname: `WS-A1-${label}`, ...agent('a1') },
      { key: 'deviceA2', organization: 'orgA', site: 'siteA2', hostname: `WS-A2-${label}`, ...agent('a2') },
      { key: 'deviceB1', organization: 'orgB', site: 'siteB1', groups: ['groupB1'], hostname: `WS-B1-${label}`, ...agent('b1') },
      { key: 'deviceQ1', organization: 'orgQ', site: 'siteQ1', hostname: `WS-Q1-${label}`, ...agent('q1') },
    ],
    roles: [
      { key: 'adminRoleA', scope: 'organization', organization: 'orgA', name: 'Admin', permissions: ['*'] },
      { key: 'readerRoleA', scope: 'organization', organization: 'orgA', name: 'Reader', permissions: ['organizations:read', 'devices:read'] },
      { key: 'adminRoleB', scope: 'organization', organization: 'orgB', name: 'Admin', permissions: ['*'] },
      { key: 'readerRoleB', scope: 'organization', organization: 'orgB', name: 'Reader', permissions: ['organizations:read', 'devices:read'] },
      { key: 'techRole', scope: 'partner', partner: 'partner', name: 'Technician', permissions: ['*'] },
      { key: 'limitedTechRole', scope: 'partner', partner: 'partner', name: 'Field technician', permissions: LIMITED_TECH_PERMISSIONS },
      { key: 'adminRoleQ', scope: 'partner', partner: 'partnerQ', name: 'Administrator', permissions: ['*'] },
      { key: 'readerRoleQ', scope: 'organization', organization: 'orgQ', name: 'Reader', permissions: ['devices:read'] },
      { key: 'inviteRoleAccept', scope: 'organization', organization: 'orgInviteAccept', name: 'Guest', permissions: ['devices:read'] },
      { key: 'inviteRoleDecline', scope: 'organization', organization: 'orgInviteDecline', name: 'Guest', permissions: ['devices:read'] },
    ],
    users: [
      { key: 'customer', email: emails.customer, name: 'Customer Admin', password: PASSWORD, totpSecret: TOTP_SECRET, memberships: [{ organization: 'orgA', role: 'adminRoleA' }] },
      { key: 'orgTech', email: emails.orgTech, name: 'Org Tech', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'techRole', orgAccess: 'selected', organizations: ['orgA'] } },
      { key: 'allTech', email: emails.allTech, name: 'All Tech', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'limitedTechRole', orgAccess: 'all' } },
      { key: 'partnerAdmin', email: emails.partnerAdmin, name: 'Partner Admin', password: PASSWORD, totpSecret: TOTP_SECRET, partnerMembership: { partner: 'partner', role: 'techRole', orgAccess: 'all' } },
      { key: 'memberA', email: emails.memberA, name: 'Member A', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'readerRoleA' }] },
      { key: 'memberB', email: emails.memberB, name: 'Member B', password: PASSWORD, memberships: [{ organization: 'orgB', role: 'readerRoleB' }] },
      {
        key: 'memberAB',
        email: emails.memberAB,
        name: 'Member of A and B',
        password: PASSWORD,
        memberships: [
          { organization: 'orgA', role: 'readerRoleA' },
          { organization: 'orgB', role: 'readerRoleB' },
        ],
      },
      { key: 'loginUser', email: emails.loginUser, name: 'Login User', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'readerRoleA' }] },
      { key: 'resetUser', email: emails.resetUser, name: 'Reset User', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'readerRoleA' }] },
      { key: 'otherPartner', email: emails.otherPartner, name: 'Other Partner Admin', password: PASSWORD, totpSecret: TOTP_SECRET, partnerMembership: { partner: 'partnerQ', role: 'adminRoleQ', orgAccess: 'all' } },
      { key: 'otherMember', email: emails.otherMember, name: 'Other Member', password: PASSWORD, memberships: [{ organization: 'orgQ', role: 'readerRoleQ' }] },
      ...Array.from({ length: MFA_USERS }, (_, i) => ({
        key: `mfaUser${i}`,
        email: emails[`mfaUser${i}`],
        name: `MFA User ${i}`,
        password: PASSWORD,
        totpSecret: TOTP_SECRET,
        memberships: [{ organization: 'orgA', role: 'readerRoleA' }],
      })),
    ],
  };
}

let addresses = 0;
/**
 * A client address of its own for every request (the app trusts X-Forwarded-For from loopback),
 * so the per-address limits of public routes count each cell and each setup on its own.
 */
export function nextClientAddress(): string {
  addresses++;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

function apiFor(t: TestApp, bearer: string | null): Api {
  const auth = (r: request.Test) => {
    r.set('X-Forwarded-For', nextClientAddress());
    return bearer ? r.set('Authorization', `Bearer ${bearer}`) : r;
  };
  const url = (path: string) => `/api/v1${path}`;
  const api: Api = {
    get: (path, query = {}) => auth(request(t.http).get(url(path)).query(query)).then((r) => r),
    post: (path, body = {}) => auth(request(t.http).post(url(path))).send(body as object).then((r) => r),
    put: (path, body = {}) => auth(request(t.http).put(url(path))).send(body as object).then((r) => r),
    patch: (path, body = {}) => auth(request(t.http).patch(url(path))).send(body as object).then((r) => r),
    delete: (path) => auth(request(t.http).delete(url(path))).then((r) => r),
    create: async (path, body = {}, method = 'post') => {
      const res = await api[method](path, body);
      if (res.status < 200 || res.status > 299) throw new Error(`setup ${method.toUpperCase()} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
    },
  };
  return api;
}

/**
 * Boots the app once (actuator on, domain verification against a loopback DNS server), seeds the
 * world, opens the callers' sessions, creates the partner administrator's key and the shared objects.
 */
export async function startMatrixWorld(): Promise<MatrixContext> {
  const dns = new TestDnsServer();
  await dns.start();
  const t = await startTestApp({ PAM_ACTUATOR_ENABLED: 'true', DNS_SERVERS: dns.address });
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  const close = async () => {
    await t.close();
    await pool.end();
    await dns.stop();
  };
  try {
    return await buildWorld(t, pool, dns, close);
  } catch (error) {
    await close();
    throw error;
  }
}

async function buildWorld(t: TestApp, pool: Pool, dns: TestDnsServer, close: () => Promise<void>): Promise<MatrixContext> {
  const sql = async <T = Record<string, any>>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as T[];
  const fixture = matrixFixture();
  const ids: Record<string, string> = await t.seed(fixture);
  const agents = Object.fromEntries(fixture.devices!.map((d) => [d.key, { id: d.agentId!, token: d.agentToken! }]));

  const people: Partial<Record<CallerName, string>> = {
    customer: ids.customer,
    orgTech: ids.orgTech,
    allTech: ids.allTech,
    partnerAdmin: ids.partnerAdmin,
    apiKey: ids.partnerAdmin,
    otherPartner: ids.otherPartner,
  };
  const sessions: Partial<Record<CallerName, string>> = {};
  const remint = async (caller: CallerName) => {
    if (caller === 'apiKey' || !people[caller]) return;
    sessions[caller] = await t.token(people[caller]!, { mfa: true });
  };
  for (const c of CALLERS) await remint(c);

  const admin = apiFor(t, sessions.partnerAdmin!);
  const key = await admin.create('/api-keys', { name: 'Partner automation (matrix)', permissions: ['*'], mfaSatisfied: true });
  sessions.apiKey = key.key as string;
  ids.apiKeyId = key.apiKey.id;
  sessions.agent = agents.deviceA1.token;

  let mfaUserNext = 0;
  const ctx: MatrixContext = {
    t,
    dns,
    ids,
    agentId: (device) => agents[device].id,
    userId: (caller) => people[caller] ?? null,
    emailOf: (userKey) => fixture.emails[userKey],
    bearer: (caller) => sessions[caller] ?? null,
    freshBearer: async (caller) => (people[caller] && caller !== 'apiKey' ? t.token(people[caller]!, { mfa: true }) : (sessions[caller] ?? null)),
    remint,
    get admin() {
      return apiFor(t, sessions.partnerAdmin!);
    },
    get otherAdmin() {
      return apiFor(t, sessions.otherPartner!);
    },
    api: (bearer) => apiFor(t, bearer),
    sql,
    uniq,
    elevation: async (s = {}) => {
      const org = s.org ?? 'orgA';
      const [device, site] = org === 'orgA' ? ['deviceA1', 'siteA1'] : ['deviceB1', 'siteB1'];
      const status = s.status ?? 'pending';
      const [row] = await sql<{ id: string }>(
        `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, subject_user_id,
                                         target_executable_path, target_executable_signer, requested_at, expires_at)
         VALUES ($1, $2, $3, $4, $5::text, 'CORP\\alice', $6, 'C:\\Program Files\\Tool\\setup.exe', 'Tool Vendor Ltd', now(),
                 CASE WHEN $5::text = 'pending' THEN NULL ELSE now() + interval '15 minutes' END)
         RETURNING id`,
        [ids[org], ids[site], ids[device], s.flowType ?? 'uac_intercept', status, s.subjectUserId ?? null],
      );
      return row.id;
    },
    approvalFor: async (userId, seed = {}) => {
      const requestId = await ctx.elevation({ ...seed, org: 'orgA', status: 'pending' });
      const [row] = await sql<{ id: string }>(
        `INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, expires_at)
         VALUES ($1, $2, $3, now() + interval '15 minutes') RETURNING id`,
        [ids.orgA, requestId, userId ?? ids.memberA],
      );
      return row.id;
    },
    resetToken: async () => {
      const token = randomBytes(32).toString('base64url');
      await sql(
        `INSERT INTO password_reset_tokens (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '1 hour')
         ON CONFLICT (user_id) WHERE used_at IS NULL DO UPDATE SET token_hash = EXCLUDED.token_hash, expires_at = EXCLUDED.expires_at`,
        [ids.resetUser, tokenHash(token)],
      );
      return token;
    },
    mfaChallenge: async () => {
      const { authenticator } = await import('otplib');
      const userId = ids[`mfaUser${mfaUserNext++ % MFA_USERS}`];
      const mfaToken = `mfa_${randomBytes(32).toString('base64url')}`;
      await sql(`INSERT INTO mfa_challenges (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '5 minutes')`, [userId, tokenHash(mfaToken)]);
      return { mfaToken, code: authenticator.generate(TOTP_SECRET) };
    },
    close,
  };
  await prepareShared(ctx);
  return ctx;
}

/** Objects the read cells share, created through the API as their owners would. */
async function prepareShared(ctx: MatrixContext): Promise<void> {
  const { ids, admin, otherAdmin } = ctx;
  const id = (body: Record<string, any>, field: string) => body[field].id as string;

  ids.ssoProviderA = id(await admin.create('/sso/providers', { name: 'Org A IdP', type: 'saml', orgId: ids.orgA }), 'provider');
  ids.ssoProviderB = id(await admin.create('/sso/providers', { name: 'Org B IdP', type: 'saml', orgId: ids.orgB }), 'provider');
  ids.ssoProviderP = id(await admin.create('/sso/providers', { name: 'Partner IdP', type: 'saml', ownerScope: 'partner' }), 'provider');
  ids.ssoDomainA = id(await admin.create('/sso/domains', { domain: `${ctx.uniq('a')}.example`, orgId: ids.orgA }), 'domain');
  ids.ssoDomainB = id(await admin.create('/sso/domains', { domain: `${ctx.uniq('b')}.example`, orgId: ids.orgB }), 'domain');
  ids.orgKeyA = id(await admin.create('/api-keys', { name: 'Org A automation', orgId: ids.orgA, permissions: ['devices:read'] }), 'apiKey');
  ids.orgKeyB = id(await admin.create('/api-keys', { name: 'Org B automation', orgId: ids.orgB, permissions: ['devices:read'] }), 'apiKey');

  ids.contactA = id(await admin.create('/contacts', { orgId: ids.orgA, name: 'Ann Contact' }), 'contact');
  ids.contactB = id(await admin.create('/contacts', { orgId: ids.orgB, name: 'Bob Contact' }), 'contact');
  ids.customFieldA = id(await admin.create('/custom-fields', { orgId: ids.orgA, key: 'asset_tag_a', name: 'Asset tag A', type: 'text' }), 'customField');
  ids.customFieldB = id(await admin.create('/custom-fields', { orgId: ids.orgB, key: 'asset_tag_b', name: 'Asset tag B', type: 'text' }), 'customField');
  ids.customFieldP = id(await admin.create('/custom-fields', { scope: 'partner', key: 'warranty', name: 'Warranty', type: 'text' }), 'customField');
  await admin.create(`/devices/${ids.deviceA1}/custom-fields/${ids.customFieldA}`, { value: 'TAG-A1' }, 'put');
  await admin.create(`/devices/${ids.deviceB1}/custom-fields/${ids.customFieldB}`, { value: 'TAG-B1' }, 'put');

  const script = { category: 'Ops', language: 'powershell', body: 'Write-Host hi', runAs: 'system' };
  ids.scriptA = id(await admin.create('/scripts', { ...script, orgId: ids.orgA, name: 'Org A script' }), 'script');
  ids.scriptB = id(await admin.create('/scripts', { ...script, orgId: ids.orgB, name: 'Org B script' }), 'script');
  ids.scriptP = id(await admin.create('/scripts', { ...script, availability: 'partner', name: 'Partner script' }), 'script');

  const policy = { type: 'configuration', features: { agent: { autoUpdate: true } } };
  ids.policyA = id(await admin.create('/policies', { ...policy, orgId: ids.orgA, name: 'Org A baseline' }), 'policy');
  ids.policyB = id(await admin.create('/policies', { ...policy, orgId: ids.orgB, name: 'Org B baseline' }), 'policy');
  ids.policyP = id(await admin.create('/policies', { ...policy, scope: 'partner', name: 'Partner baseline' }), 'policy');
  ids.assignmentA = id(await admin.create(`/policies/${ids.policyA}/assignments`, { targetType: 'organization', targetId: ids.orgA }), 'assignment');
  ids.assignmentP = id(await admin.create(`/policies/${ids.policyP}/assignments`, { targetType: 'partner', targetId: ids.partner }), 'assignment');
  ids.assignmentPB = id(await admin.create(`/policies/${ids.policyP}/assignments`, { targetType: 'organization', targetId: ids.orgB }), 'assignment');

  const filter = { field: 'hostname', op: 'startsWith', value: 'WS-' };
  ids.dynamicGroupA = id(await admin.create('/dynamic-groups', { orgId: ids.orgA, name: 'Dynamic A', filter }), 'group');
  ids.dynamicGroupB = id(await admin.create('/dynamic-groups', { orgId: ids.orgB, name: 'Dynamic B', filter }), 'group');

  ids.ruleA = id(await admin.create('/pam/rules', { orgId: ids.orgA, name: 'Installers A', verdict: 'require_approval', matchPathGlob: 'C:\\Installers\\**' }), 'rule');
  ids.ruleB = id(await admin.create('/pam/rules', { orgId: ids.orgB, name: 'Installers B', verdict: 'require_approval', matchPathGlob: 'C:\\Installers\\**' }), 'rule');
  ids.signerGroupA = id(await admin.create('/pam/signer-groups', { orgId: ids.orgA, name: 'Vendors A', signers: ['Contoso Ltd'] }), 'signerGroup');
  ids.signerGroupB = id(await admin.create('/pam/signer-groups', { orgId: ids.orgB, name: 'Vendors B', signers: ['Contoso Ltd'] }), 'signerGroup');
  ids.elevationA = await ctx.elevation({ org: 'orgA' });
  ids.elevationB = await ctx.elevation({ org: 'orgB' });
  ids.activeB = await ctx.elevation({ org: 'orgB', status: 'approved' });

  ids.importA = await startImport(ctx, { type: 'contacts', orgId: ids.orgA }, 'externalId,name\nimp-a-1,Imported A\n', 'text/csv');
  ids.importB = await startImport(ctx, { type: 'contacts', orgId: ids.orgB }, 'externalId,name\nimp-b-1,Imported B\n', 'text/csv');
  // A partner-wide import that touched organization B: its report names what it wrote there.
  const [orgB] = await ctx.sql<{ name: string }>(`SELECT name FROM organizations WHERE id = $1`, [ids.orgB]);
  ids.importSecret = ctx.uniq('Bea Confidential');
  const doc = {
    format: 'rmm-interchange',
    version: 1,
    source: { system: 'matrix' },
    customers: [{ externalId: 'cust-b', name: orgB.name, contacts: [{ externalId: 'ct-b-1', name: ids.importSecret }] }],
  };
  ids.importP = await startImport(ctx, {}, doc, 'application/json');
  for (const key of ['importA', 'importB', 'importP']) await importFinished(ctx, ids[key]);

  ids.scimConnA = id(await admin.create('/scim/connections', { name: 'Org A directory', orgId: ids.orgA }), 'connection');
  ids.scimConnB = id(await admin.create('/scim/connections', { name: 'Org B directory', orgId: ids.orgB }), 'connection');
  ids.scimConnP = id(await admin.create('/scim/connections', { name: 'Partner directory', ownerScope: 'partner' }), 'connection');

  // Objects of the other partner, for the lists that must not show them to partner P's callers.
  ids.otherProvider = id(await otherAdmin.create('/sso/providers', { name: 'Q IdP', type: 'saml', ownerScope: 'partner' }), 'provider');
  ids.otherScimConn = id(await otherAdmin.create('/scim/connections', { name: 'Q directory', ownerScope: 'partner' }), 'connection');
}

async function startImport(ctx: MatrixContext, query: Record<string, string>, body: unknown, type: string): Promise<string> {
  const res = await request(ctx.t.http)
    .post('/api/v1/imports')
    .query(query)
    .set('Authorization', `Bearer ${ctx.bearer('partnerAdmin')}`)
    .set('Content-Type', type)
    .send(typeof body === 'string' ? body : JSON.stringify(body));
  if (res.status !== 202) throw new Error(`setup import answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.import.id;
}

async function importFinished(ctx: MatrixContext, id: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const [row] = await ctx.sql<{ status: string }>(`SELECT status FROM imports WHERE id = $1`, [id]);
    if (row.status === 'completed') return;
    if (row.status === 'failed') throw new Error(`setup import ${id} failed`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`setup import ${id} did not finish`);
}

/** A pending held-back contact match of an import, which acknowledging resolves. */
export async function pendingMatch(ctx: MatrixContext, importKey: 'importA' | 'importB', org: 'orgA' | 'orgB'): Promise<string> {
  const externalId = ctx.uniq('held');
  const [row] = await ctx.sql<{ id: string }>(
    `INSERT INTO import_matches (org_id, import_id, source_ref, external_id, source, reason) VALUES ($1, $2, 'line 2', $3, $4, 'name') RETURNING id`,
    [ctx.ids[org], ctx.ids[importKey], externalId, JSON.stringify({ name: 'Held Back Person', externalId })],
  );
  return row.id;
}
