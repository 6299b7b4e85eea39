import { hasPermission } from '../../../src/common/principal';
import { PASSWORD } from '../../factories/tenant.factory';
import { CALLERS, CallerName, LIMITED_TECH_PERMISSIONS, MatrixContext, pendingMatch } from './authorization-matrix.world';

/**
 * The authorization matrix: for every operation of the served OpenAPI document, the outcome each
 * kind of caller must get, declared once. The runner (authorization-matrix.e2e.test.ts) fails when
 * an operation has no row here, when a row names an operation that no longer exists, and when any
 * cell answers otherwise over HTTP.
 *
 * The table states the intended policy, derived from each route's @Auth/@Public/@AgentAuth
 * decorator, the services' tenancy and person-only checks, the partner-wide rule of
 * src/common/principal.ts, the spec and docs/. Where the code and the policy disagree, the table
 * keeps the policy and the cell fails.
 *
 * The callers (authorization-matrix.world.ts): anonymous; customer = `*` administrator of
 * organization A; orgTech = `*` technician limited to organization A; allTech = technician of
 * every organization with a device-only role; partnerAdmin = `*` technician of every organization;
 * apiKey = partnerAdmin's partner-wide `*` key, MFA-satisfied; agent = device A1's agent token;
 * otherPartner = `*` administrator of partner Q. Every session is MFA-satisfied.
 */

/** 'ok': the variant's success status. Otherwise the exact status and error code. */
export type Outcome = 'ok' | readonly [status: number, code: string];
export type Expectations = Record<CallerName, Outcome>;

export interface Variant<S = any> {
  /** What the request targets, as the test names say it (e.g. "a site of organization B"). */
  target: string;
  /** The status of success. Redirects name their Location. */
  success: number;
  location?: string;
  /** A fresh target per cell, for operations that change or delete it. */
  setup?: (ctx: MatrixContext, caller: CallerName) => Promise<S>;
  params?: (ctx: MatrixContext, s: S, caller: CallerName) => Record<string, string>;
  query?: (ctx: MatrixContext, s: S, caller: CallerName) => Record<string, string | number | boolean>;
  body?: (ctx: MatrixContext, s: S, caller: CallerName) => unknown;
  /** Default application/json. */
  contentType?: string;
  /** The credential of the cell when not the caller's shared one (a fresh session for cells that end or spend it). */
  bearer?: (ctx: MatrixContext, s: S, caller: CallerName) => Promise<string | null>;
  /** The cell ends the caller's other sessions: the runner mints new ones after it. */
  endsSessions?: boolean;
  /** Ids a successful answer must not contain, for the callers named (what a list must not leak). */
  hides?: { from: CallerName[]; ids: (ctx: MatrixContext) => string[] }[];
  expect: Expectations;
}

export type Table = Record<string, Variant[]>;

// ---------------------------------------------------------------- outcomes and presets

export const UNAUTHENTICATED = [401, 'unauthenticated'] as const;
export const FORBIDDEN = [403, 'forbidden'] as const;
export const PARTNER_SCOPE = [403, 'partner_scope_required'] as const;
export const NOT_FOUND = [404, 'not_found'] as const;
export const PRIVILEGE_ESCALATION = [403, 'privilege_escalation'] as const;
export const SELF_APPROVAL = [403, 'self_approval'] as const;
/** Person-only routes refuse an API key acting for its creator. */
export const USER_REQUIRED = [403, 'user_required'] as const;
export const SESSION_REQUIRED = [403, 'session_required'] as const;

const every = (o: Outcome): Expectations => Object.fromEntries(CALLERS.map((c) => [c, o])) as Expectations;

/** A public route: it ignores any bearer, so every caller gets the same answer. */
export const PUBLIC = (o: Outcome = 'ok'): Expectations => every(o);

/** Agent routes: only device A1's own token on its own path. */
const AGENT_ONLY: Expectations = { ...every(UNAUTHENTICATED), agent: 'ok' };

/**
 * A bearer route needing `permission` (null: any signed-in caller). Anonymous callers and agent
 * tokens are unauthenticated there; the all-organization technician's limited role is refused
 * by the guard before anything else whenever it lacks the permission.
 */
function signedIn(permission: string | null, o: Partial<Expectations> = {}): Expectations {
  const e: Expectations = {
    anonymous: UNAUTHENTICATED,
    customer: 'ok',
    orgTech: 'ok',
    allTech: 'ok',
    partnerAdmin: 'ok',
    apiKey: 'ok',
    agent: UNAUTHENTICATED,
    otherPartner: 'ok',
    ...o,
  };
  if (permission && !hasPermission(LIMITED_TECH_PERMISSIONS, permission)) e.allTech = FORBIDDEN;
  return e;
}

/** Something of the caller's own tenant (a list, a creation in one's own partner or organization). */
const own = signedIn;
/** A target in organization A: every caller of partner P reaches it; another partner's id is 404. */
const inOrgA = (permission: string | null, o: Partial<Expectations> = {}) => signedIn(permission, { otherPartner: NOT_FOUND, ...o });
/** A target in organization B: out of reach of the customer and the organization-limited technician. */
const inOrgB = (permission: string | null, o: Partial<Expectations> = {}) =>
  signedIn(permission, { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND, ...o });
/**
 * A partner-wide object of partner P (issue 13 item 2): created, changed or deleted only by a
 * caller who reaches every organization; the organization-limited technician gets 403 forbidden,
 * an organization session 403 partner_scope_required (or 404 where it cannot see the object).
 */
const partnerWide = (permission: string | null, o: Partial<Expectations> = {}) =>
  signedIn(permission, { customer: PARTNER_SCOPE, orgTech: FORBIDDEN, otherPartner: NOT_FOUND, ...o });
/** Creating a partner-wide object in the caller's own partner (another partner's administrator creates in his). */
const newPartnerWide = (permission: string | null, o: Partial<Expectations> = {}) => signedIn(permission, { customer: PARTNER_SCOPE, orgTech: FORBIDDEN, ...o });

// ---------------------------------------------------------------- setup helpers

type Ctx = MatrixContext;

/** Creates an object through the API as the partner administrator and returns its id. */
function fresh(path: string, field: string, body: (ctx: Ctx) => unknown) {
  return async (ctx: Ctx) => {
    const created = await ctx.admin.create(path, body(ctx));
    return { id: created[field].id as string };
  };
}
const id = (ctx: Ctx, s: { id: string }) => ({ id: s.id });
const of = (key: string) => (ctx: Ctx) => ({ id: ctx.ids[key] });

const prompt = () => ({
  subject_username: 'CORP\\alice',
  target_executable_path: 'C:\\Program Files\\Contoso\\setup.exe',
  target_executable_hash: 'a'.repeat(64),
  target_executable_signer: 'Contoso Ltd',
  pid: 4242,
  parent_image: 'C:\\Windows\\explorer.exe',
  command_line: '"C:\\Program Files\\Contoso\\setup.exe" /quiet',
  observed_at: new Date().toISOString(),
});

const script = (ctx: Ctx, extra: object) => ({ name: ctx.uniq('Script'), category: 'Ops', language: 'powershell', body: 'Write-Host hi', runAs: 'system', ...extra });
const policy = (ctx: Ctx, extra: object) => ({ type: 'configuration', name: ctx.uniq('Policy'), features: { agent: { autoUpdate: true } }, ...extra });
const fieldKey = (ctx: Ctx) => ctx.uniq('f').replace('-', '_');
const filter = { field: 'hostname', op: 'startsWith', value: 'WS-' };

/** A user of an organization, added by the partner administrator. */
async function freshMember(ctx: Ctx, org: 'orgA' | 'orgB'): Promise<{ id: string }> {
  const role = org === 'orgA' ? 'readerRoleA' : 'readerRoleB';
  const created = await ctx.admin.create('/users', { email: `${ctx.uniq('member')}@matrix.example`, name: 'Fresh Member', orgId: ctx.ids[org], roleId: ctx.ids[role] });
  return { id: created.user.id };
}

/** An invitation of one of partner Q's organizations addressed to a person (the caller, or someone else), sent by partner Q's administrator. */
async function invitation(ctx: Ctx, org: 'orgInviteAccept' | 'orgInviteDecline', userId: string): Promise<{ id: string }> {
  const role = org === 'orgInviteAccept' ? 'inviteRoleAccept' : 'inviteRoleDecline';
  const [row] = await ctx.sql<{ id: string }>(
    `INSERT INTO membership_invitations (user_id, org_id, role_id, email, name, invited_by)
     SELECT id, $2, $3, email, name, $4 FROM users WHERE id = $1
     ON CONFLICT (org_id, user_id) DO UPDATE SET name = EXCLUDED.name, invited_by = EXCLUDED.invited_by RETURNING id`,
    [userId, ctx.ids[org], ctx.ids[role], ctx.ids.otherPartner],
  );
  return row;
}

/** A phone registered by a person, through their own session. */
async function phoneOf(ctx: Ctx, userId: string): Promise<{ id: string }> {
  const created = await ctx.api(await ctx.t.token(userId, { mfa: true })).create('/mobile-devices', { platform: 'ios', pushToken: ctx.uniq('push') });
  return { id: created.mobileDevice.id };
}

/** A queued agent command of a device, as actuation or revocation would have queued it. */
async function queuedCommand(ctx: Ctx, device: 'deviceA1' | 'deviceA2' | 'deviceB1'): Promise<{ id: string }> {
  const org = device === 'deviceB1' ? 'orgB' : 'orgA';
  const [row] = await ctx.sql<{ id: string }>(
    `INSERT INTO device_commands (org_id, device_id, type, payload) VALUES ($1, $2, 'revoke_elevation', '{}') RETURNING id`,
    [ctx.ids[org], ctx.ids[device]],
  );
  return row;
}

/** A domain claimed for an organization, with its TXT record published on the test DNS server. */
async function publishedDomain(ctx: Ctx, org: 'orgA' | 'orgB'): Promise<{ id: string }> {
  const { domain } = await ctx.admin.create('/sso/domains', { domain: `${ctx.uniq('verify')}.example`, orgId: ctx.ids[org] });
  ctx.dns.setTxt(domain.recordName, [[domain.recordValue]]);
  return { id: domain.id };
}

const personOf = (ctx: Ctx, caller: CallerName) => ctx.userId(caller) ?? ctx.ids.memberA;

// ---------------------------------------------------------------- the table


// ---------------------------------------------------------------- webhooks

const hook = (extra: object = {}) => ({ url: 'https://hooks.example.com/matrix', eventTypes: ['elevation.requested'], ...extra });
type Hook = { id: string; messageId: string };
const sharedHooks = new WeakMap<Ctx, Promise<Record<'A' | 'B' | 'P', Hook>>>();
const madeHooks = new WeakMap<Ctx, Record<'A' | 'B' | 'P', Hook>>();
/** The ids of the shared subscriptions, once made (the list's setup makes them before its cell runs). */
const hookIds = (ctx: Ctx, keys: ('A' | 'B' | 'P')[]) => keys.map((k) => madeHooks.get(ctx)?.[k]?.id ?? 'not-made');

/** A subscription of organization A, of organization B and of the partner, each with a queued message; made once per world. */
function hooks(ctx: Ctx): Promise<Record<'A' | 'B' | 'P', Hook>> {
  let made = sharedHooks.get(ctx);
  if (!made) {
    made = (async () => {
      const out = {} as Record<'A' | 'B' | 'P', Hook>;
      for (const [key, body] of [['A', { orgId: ctx.ids.orgA }], ['B', { orgId: ctx.ids.orgB }], ['P', { scope: 'partner' }]] as const) {
        out[key] = await freshHook(body)(ctx);
      }
      madeHooks.set(ctx, out);
      return out;
    })();
    sharedHooks.set(ctx, made);
  }
  return made;
}

/** A new subscription, created by the partner administrator, with a message queued for it. */
function freshHook(owner: object) {
  return async (ctx: Ctx): Promise<Hook> => {
    const created = await ctx.admin.create('/webhooks/subscriptions', hook(owner));
    const s = created.subscription as { id: string; orgId: string | null; partnerId: string | null };
    const [m] = await ctx.sql<{ id: string }>(
      `INSERT INTO webhook_messages (subscription_id, org_id, partner_id, event_type, payload) VALUES ($1, $2, $3, 'elevation.requested', '{}') RETURNING id`,
      [s.id, s.orgId, s.partnerId],
    );
    return { id: s.id, messageId: m.id };
  };
}
const hookOf = (key: 'A' | 'B' | 'P') => async (ctx: Ctx) => (await hooks(ctx))[key];
const hookId = (ctx: Ctx, s: Hook) => ({ id: s.id });
const hookMessage = (ctx: Ctx, s: Hook) => ({ id: s.id, messageId: s.messageId });
/**
 * A partner subscription forwards every organization's events: only callers reaching all of them see it
 * (an organization session and the organization-limited technician get 404), and only those holding
 * `organizations:write` change it.
 */
const partnerHookRead = signedIn('audit:read', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND });
const partnerHookWrite = partnerWide('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND });

/** Every route of one subscription, for the three owners: the shared subscriptions, or (`fresh`) a new one per cell. */
function hookRoutes(success: number, fresh: boolean, params: (ctx: Ctx, s: Hook) => Record<string, string>, body: (() => unknown) | undefined, write: boolean): Variant<Hook>[] {
  const made = (key: 'A' | 'B' | 'P') =>
    fresh ? (ctx: Ctx) => freshHook(key === 'P' ? { scope: 'partner' } : { orgId: key === 'A' ? ctx.ids.orgA : ctx.ids.orgB })(ctx) : hookOf(key);
  const permission = write ? 'organizations:write' : 'audit:read';
  return [
    { target: 'a subscription of organization A', success, setup: made('A'), params, body, expect: inOrgA(permission) },
    { target: 'a subscription of organization B', success, setup: made('B'), params, body, expect: inOrgB(permission) },
    { target: 'a partner subscription', success, setup: made('P'), params, body, expect: write ? partnerHookWrite : partnerHookRead },
  ];
}

export const TABLE: Table = {
  // ---- audit
  'GET /api/v1/audit-logs': [
    {
      target: "the caller's audit trail",
      success: 200,
      hides: [
        { from: ['customer'], ids: (ctx) => [ctx.ids.orgB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.orgA, ctx.ids.orgB, ctx.ids.partner] },
      ],
      expect: own('audit:read'),
    },
    {
      target: 'the entries about a contact of organization B',
      success: 200,
      query: (ctx) => ({ resourceId: ctx.ids.contactB }),
      hides: [{ from: ['customer', 'orgTech', 'otherPartner'], ids: (ctx) => [ctx.ids.contactB] }],
      expect: own('audit:read'),
    },
  ],
  // Whose events each caller's stream holds is checked line by line in test/e2e/audit/audit-export.e2e.test.ts (the runner reads JSON answers).
  'GET /api/v1/audit-logs/export': [
    { target: "the caller's audit trail of the last day, as NDJSON", success: 200, query: () => ({ from: new Date(Date.now() - 86_400_000).toISOString() }), expect: own('audit:read') },
  ],

  // ---- password sign-in and account self-service
  'POST /api/v1/auth/login': [
    { target: "a user's right password", success: 200, body: (ctx) => ({ email: ctx.emailOf('loginUser'), password: PASSWORD }), expect: PUBLIC() },
  ],
  'POST /api/v1/auth/mfa/verify': [
    { target: 'a fresh MFA challenge and its code', success: 200, setup: (ctx) => ctx.mfaChallenge(), body: (ctx, s) => s, expect: PUBLIC() },
  ],
  'POST /api/v1/auth/mfa/enroll': [
    {
      target: "the caller's own account, with the password",
      success: 200,
      body: () => ({ password: PASSWORD }),
      // Account self-service belongs to the person at a session, never to a key acting for them.
      expect: signedIn(null, { apiKey: SESSION_REQUIRED }),
    },
  ],
  'POST /api/v1/auth/mfa/activate': [
    {
      target: "the code of the caller's own pending authenticator",
      success: 200,
      setup: async (ctx, caller) => {
        const { authenticator } = await import('otplib');
        if (!ctx.userId(caller) || caller === 'apiKey') return { code: '000000' };
        const enrolled = await ctx.api(ctx.bearer(caller)).create('/auth/mfa/enroll', { password: PASSWORD });
        return { code: authenticator.generate(enrolled.secret) };
      },
      body: (ctx, s) => s,
      expect: signedIn(null, { apiKey: SESSION_REQUIRED }),
    },
  ],
  'POST /api/v1/auth/refresh': [
    {
      target: 'a fresh refresh token',
      success: 200,
      setup: async (ctx) => ({ refreshToken: (await ctx.api(null).create('/auth/login', { email: ctx.emailOf('loginUser'), password: PASSWORD })).refreshToken }),
      body: (ctx, s) => s,
      expect: PUBLIC(),
    },
  ],
  'POST /api/v1/auth/logout': [
    // An API key has no session to end: the answer is the same, and nothing happens.
    { target: "the caller's own session", success: 200, bearer: (ctx, s, caller) => ctx.freshBearer(caller), expect: signedIn(null) },
  ],
  'POST /api/v1/auth/forgot-password': [{ target: 'any address', success: 200, body: (ctx) => ({ email: `${ctx.uniq('nobody')}@matrix.example` }), expect: PUBLIC() }],
  'POST /api/v1/auth/reset-password': [
    { target: 'a valid reset token', success: 200, setup: async (ctx) => ({ token: await ctx.resetToken() }), body: (ctx, s) => ({ token: s.token, password: PASSWORD }), expect: PUBLIC() },
  ],
  'POST /api/v1/auth/change-password': [
    {
      target: "the caller's own password",
      success: 200,
      bearer: (ctx, s, caller) => ctx.freshBearer(caller),
      body: () => ({ currentPassword: PASSWORD, newPassword: PASSWORD }),
      endsSessions: true,
      expect: signedIn(null, { apiKey: SESSION_REQUIRED }),
    },
  ],
  'GET /api/v1/auth/me': [{ target: 'the person behind the credential', success: 200, expect: signedIn(null) }],

  // ---- API keys
  'GET /api/v1/api-keys': [
    {
      target: "the caller's tenant",
      success: 200,
      hides: [
        // Partner-wide keys are credentials of the whole partner: invisible to a limited technician (item 2).
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.apiKeyId, ctx.ids.orgKeyB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.apiKeyId, ctx.ids.orgKeyA, ctx.ids.orgKeyB] },
      ],
      expect: own('organizations:write'),
    },
    { target: 'the keys of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write') },
  ],
  'POST /api/v1/api-keys': [
    {
      target: 'a key naming no organization (partner-wide from a partner session)',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('Key'), permissions: ['devices:read'] }),
      // API keys cannot create API keys (item 3); a limited technician cannot mint a partner-wide key (item 2).
      expect: own('organizations:write', { orgTech: PRIVILEGE_ESCALATION, apiKey: FORBIDDEN }),
    },
    {
      target: 'a key of organization A',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('Key'), orgId: ctx.ids.orgA, permissions: ['devices:read'] }),
      expect: inOrgA('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a key of organization B',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('Key'), orgId: ctx.ids.orgB, permissions: ['devices:read'] }),
      expect: inOrgB('organizations:write', { apiKey: FORBIDDEN }),
    },
  ],
  'DELETE /api/v1/api-keys/{id}': [
    {
      target: "the partner administrator's partner-wide key",
      success: 200,
      setup: fresh('/api-keys', 'apiKey', (ctx) => ({ name: ctx.uniq('Key'), permissions: ['devices:read'] })),
      params: id,
      // Invisible to the limited technician, so not found rather than forbidden.
      expect: signedIn('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }),
    },
    {
      target: 'a key of organization A',
      success: 200,
      setup: fresh('/api-keys', 'apiKey', (ctx) => ({ name: ctx.uniq('Key'), orgId: ctx.ids.orgA, permissions: ['devices:read'] })),
      params: id,
      expect: inOrgA('organizations:write'),
    },
  ],

  // ---- health
  'GET /api/v1/health': [{ target: 'the service', success: 200, expect: PUBLIC() }],
  'GET /api/v1/health/ready': [{ target: 'the service', success: 200, expect: PUBLIC() }],

  // ---- organizations
  'GET /api/v1/organizations': [
    {
      target: "the caller's organizations",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.orgB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.orgA, ctx.ids.orgB] },
      ],
      expect: own('organizations:read'),
    },
  ],
  'POST /api/v1/organizations': [
    { target: "a new organization of the caller's partner", success: 201, body: (ctx) => ({ name: ctx.uniq('Org') }), expect: own('organizations:write', { customer: PARTNER_SCOPE }) },
  ],
  'GET /api/v1/organizations/{id}': [
    { target: 'organization A', success: 200, params: of('orgA'), expect: inOrgA('organizations:read') },
    { target: 'organization B', success: 200, params: of('orgB'), expect: inOrgB('organizations:read') },
  ],
  'PATCH /api/v1/organizations/{id}': [
    { target: 'organization A', success: 200, params: of('orgA'), body: () => ({ status: 'active' }), expect: inOrgA('organizations:write') },
    { target: 'organization B', success: 200, params: of('orgB'), body: () => ({ status: 'active' }), expect: inOrgB('organizations:write') },
  ],

  // ---- sites
  'GET /api/v1/sites': [
    {
      target: "the caller's sites",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.siteB1] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.siteA1, ctx.ids.siteB1] },
      ],
      expect: own('organizations:read'),
    },
    { target: 'the sites of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('organizations:read') },
  ],
  'POST /api/v1/sites': [
    { target: 'a site of organization A', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Site') }), expect: inOrgA('organizations:write') },
    { target: 'a site of organization B', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Site') }), expect: inOrgB('organizations:write') },
  ],
  'GET /api/v1/sites/{id}': [
    { target: 'a site of organization A', success: 200, params: of('siteA1'), expect: inOrgA('organizations:read') },
    { target: 'a site of organization B', success: 200, params: of('siteB1'), expect: inOrgB('organizations:read') },
  ],
  'PATCH /api/v1/sites/{id}': [
    { target: 'a site of organization A', success: 200, params: of('siteA1'), body: () => ({ timezone: 'Europe/Paris' }), expect: inOrgA('organizations:write') },
    { target: 'a site of organization B', success: 200, params: of('siteB1'), body: () => ({ timezone: 'UTC' }), expect: inOrgB('organizations:write') },
  ],
  'DELETE /api/v1/sites/{id}': [
    {
      target: 'a site of organization A',
      success: 200,
      setup: fresh('/sites', 'site', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Site') })),
      params: id,
      expect: inOrgA('organizations:write'),
    },
    {
      target: 'a site of organization B',
      success: 200,
      setup: fresh('/sites', 'site', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Site') })),
      params: id,
      expect: inOrgB('organizations:write'),
    },
  ],

  // ---- device groups
  'GET /api/v1/device-groups': [
    {
      target: "the caller's device groups",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.groupB1] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.groupA1, ctx.ids.groupB1] },
      ],
      expect: own('devices:read'),
    },
    { target: 'the groups of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('devices:read') },
  ],
  'POST /api/v1/device-groups': [
    { target: 'a group of organization A', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Group') }), expect: inOrgA('devices:write') },
    { target: 'a group of organization B', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Group') }), expect: inOrgB('devices:write') },
  ],
  'GET /api/v1/device-groups/{id}': [
    { target: 'a group of organization A', success: 200, params: of('groupA1'), expect: inOrgA('devices:read') },
    { target: 'a group of organization B', success: 200, params: of('groupB1'), expect: inOrgB('devices:read') },
  ],
  'PATCH /api/v1/device-groups/{id}': [
    { target: 'a group of organization A', success: 200, params: of('groupA1'), body: () => ({ name: 'Workstations A' }), expect: inOrgA('devices:write') },
    { target: 'a group of organization B', success: 200, params: of('groupB1'), body: () => ({ name: 'Workstations B' }), expect: inOrgB('devices:write') },
  ],
  'DELETE /api/v1/device-groups/{id}': [
    {
      target: 'a group of organization A',
      success: 200,
      setup: fresh('/device-groups', 'deviceGroup', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Group') })),
      params: id,
      expect: inOrgA('devices:write'),
    },
    {
      target: 'a group of organization B',
      success: 200,
      setup: fresh('/device-groups', 'deviceGroup', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Group') })),
      params: id,
      expect: inOrgB('devices:write'),
    },
  ],
  'POST /api/v1/device-groups/{id}/members': [
    {
      target: 'device A1 into a group of organization A',
      success: 201,
      setup: fresh('/device-groups', 'deviceGroup', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Group') })),
      params: id,
      body: (ctx) => ({ deviceIds: [ctx.ids.deviceA1] }),
      expect: inOrgA('devices:write'),
    },
    {
      target: 'device B1 into a group of organization B',
      success: 201,
      setup: fresh('/device-groups', 'deviceGroup', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Group') })),
      params: id,
      body: (ctx) => ({ deviceIds: [ctx.ids.deviceB1] }),
      expect: inOrgB('devices:write'),
    },
    {
      target: 'device B1 into a group of organization A',
      success: 201,
      setup: fresh('/device-groups', 'deviceGroup', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Group') })),
      params: id,
      body: (ctx) => ({ deviceIds: [ctx.ids.deviceB1] }),
      // A group holds devices of its own organization only, whoever asks.
      expect: inOrgA('devices:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, apiKey: NOT_FOUND }),
    },
  ],
  'DELETE /api/v1/device-groups/{id}/members/{deviceId}': [
    {
      target: 'device A1 out of a group of organization A',
      success: 200,
      setup: async (ctx) => {
        const s = await fresh('/device-groups', 'deviceGroup', (c) => ({ orgId: c.ids.orgA, name: c.uniq('Group') }))(ctx);
        await ctx.admin.create(`/device-groups/${s.id}/members`, { deviceIds: [ctx.ids.deviceA1] });
        return s;
      },
      params: (ctx, s) => ({ id: s.id, deviceId: ctx.ids.deviceA1 }),
      expect: inOrgA('devices:write'),
    },
    {
      target: 'device B1 out of a group of organization B',
      success: 200,
      setup: async (ctx) => {
        const s = await fresh('/device-groups', 'deviceGroup', (c) => ({ orgId: c.ids.orgB, name: c.uniq('Group') }))(ctx);
        await ctx.admin.create(`/device-groups/${s.id}/members`, { deviceIds: [ctx.ids.deviceB1] });
        return s;
      },
      params: (ctx, s) => ({ id: s.id, deviceId: ctx.ids.deviceB1 }),
      expect: inOrgB('devices:write'),
    },
  ],

  // ---- devices
  'GET /api/v1/devices': [
    {
      target: "the caller's devices",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.deviceB1] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.deviceA1, ctx.ids.deviceB1] },
      ],
      expect: own('devices:read'),
    },
    { target: 'the devices of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('devices:read') },
  ],
  'POST /api/v1/devices': [
    { target: 'a device in site A1', success: 201, body: (ctx) => ({ siteId: ctx.ids.siteA1, hostname: ctx.uniq('NEW') }), expect: inOrgA('devices:write') },
    { target: 'a device in site B1', success: 201, body: (ctx) => ({ siteId: ctx.ids.siteB1, hostname: ctx.uniq('NEW') }), expect: inOrgB('devices:write') },
  ],
  'GET /api/v1/devices/{id}': [
    { target: 'device A1', success: 200, params: of('deviceA1'), expect: inOrgA('devices:read') },
    { target: 'device B1', success: 200, params: of('deviceB1'), expect: inOrgB('devices:read') },
  ],
  'PATCH /api/v1/devices/{id}': [
    { target: 'device A1', success: 200, params: of('deviceA1'), body: () => ({ osType: 'windows' }), expect: inOrgA('devices:write') },
    { target: 'device B1', success: 200, params: of('deviceB1'), body: () => ({ osType: 'windows' }), expect: inOrgB('devices:write') },
  ],
  'POST /api/v1/devices/{id}/enroll': [
    {
      target: 'a new device of organization A',
      success: 201,
      setup: fresh('/devices', 'device', (ctx) => ({ siteId: ctx.ids.siteA1, hostname: ctx.uniq('ENROL') })),
      params: id,
      expect: inOrgA('devices:write'),
    },
    {
      target: 'a new device of organization B',
      success: 201,
      setup: fresh('/devices', 'device', (ctx) => ({ siteId: ctx.ids.siteB1, hostname: ctx.uniq('ENROL') })),
      params: id,
      expect: inOrgB('devices:write'),
    },
  ],

  // ---- roles
  'GET /api/v1/roles': [
    {
      target: "the caller's roles",
      success: 200,
      hides: [
        { from: ['customer'], ids: (ctx) => [ctx.ids.techRole, ctx.ids.adminRoleB] },
        { from: ['orgTech'], ids: (ctx) => [ctx.ids.adminRoleB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.adminRoleA, ctx.ids.techRole] },
      ],
      expect: own('users:read'),
    },
    { target: 'the roles of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('users:read') },
  ],
  'POST /api/v1/roles': [
    {
      target: 'a role of organization A',
      success: 201,
      body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Role'), permissions: ['devices:read'] }),
      expect: inOrgA('users:write'),
    },
    {
      target: 'a role of organization B',
      success: 201,
      body: (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Role'), permissions: ['devices:read'] }),
      expect: inOrgB('users:write'),
    },
    {
      target: 'a partner role',
      success: 201,
      body: (ctx) => ({ scope: 'partner', name: ctx.uniq('Role'), permissions: ['devices:read'] }),
      expect: newPartnerWide('users:write'),
    },
  ],
  'GET /api/v1/roles/{id}': [
    { target: 'a role of organization A', success: 200, params: of('adminRoleA'), expect: inOrgA('users:read') },
    { target: 'a role of organization B', success: 200, params: of('adminRoleB'), expect: inOrgB('users:read') },
    { target: 'a partner role', success: 200, params: of('techRole'), expect: signedIn('users:read', { customer: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'PATCH /api/v1/roles/{id}': [
    {
      target: 'a role of organization A',
      success: 200,
      setup: fresh('/roles', 'role', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Role'), permissions: ['devices:read'] })),
      params: id,
      body: () => ({ permissions: ['devices:read', 'organizations:read'] }),
      expect: inOrgA('users:write'),
    },
    {
      target: 'a role of organization B',
      success: 200,
      setup: fresh('/roles', 'role', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Role'), permissions: ['devices:read'] })),
      params: id,
      body: () => ({ permissions: ['devices:read', 'organizations:read'] }),
      expect: inOrgB('users:write'),
    },
    {
      target: 'a partner role',
      success: 200,
      setup: fresh('/roles', 'role', (ctx) => ({ scope: 'partner', name: ctx.uniq('Role'), permissions: ['devices:read'] })),
      params: id,
      body: () => ({ permissions: ['*'] }),
      expect: partnerWide('users:write', { customer: NOT_FOUND }),
    },
  ],
  'DELETE /api/v1/roles/{id}': [
    {
      target: 'a role of organization A',
      success: 200,
      setup: fresh('/roles', 'role', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Role'), permissions: ['devices:read'] })),
      params: id,
      expect: inOrgA('users:write'),
    },
    {
      target: 'a role of organization B',
      success: 200,
      setup: fresh('/roles', 'role', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Role'), permissions: ['devices:read'] })),
      params: id,
      expect: inOrgB('users:write'),
    },
    {
      target: 'a partner role',
      success: 200,
      setup: fresh('/roles', 'role', (ctx) => ({ scope: 'partner', name: ctx.uniq('Role'), permissions: ['devices:read'] })),
      params: id,
      expect: partnerWide('users:write', { customer: NOT_FOUND }),
    },
  ],

  // ---- users and memberships
  'GET /api/v1/users': [
    {
      target: "the caller's users",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.memberB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.memberA, ctx.ids.memberB, ctx.ids.customer] },
      ],
      expect: own('users:read'),
    },
    { target: 'the users of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('users:read') },
  ],
  'POST /api/v1/users': [
    {
      target: 'a user of organization A',
      success: 201,
      body: (ctx) => ({ email: `${ctx.uniq('new')}@matrix.example`, name: 'New User', orgId: ctx.ids.orgA, roleId: ctx.ids.readerRoleA }),
      expect: inOrgA('users:write'),
    },
    {
      target: 'a user of organization B',
      success: 201,
      body: (ctx) => ({ email: `${ctx.uniq('new')}@matrix.example`, name: 'New User', orgId: ctx.ids.orgB, roleId: ctx.ids.readerRoleB }),
      expect: inOrgB('users:write'),
    },
  ],
  'GET /api/v1/users/{id}': [
    { target: 'a member of organization A', success: 200, params: of('memberA'), expect: inOrgA('users:read') },
    { target: 'a member of organization B', success: 200, params: of('memberB'), expect: inOrgB('users:read') },
    {
      target: 'a member of organizations A and B',
      success: 200,
      params: of('memberAB'),
      // Only the memberships within the caller's reach are shown.
      hides: [{ from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.orgB, ctx.ids.readerRoleB] }],
      expect: inOrgA('users:read'),
    },
  ],
  'POST /api/v1/users/{id}/memberships': [
    {
      target: 'a member of organization A joining organization B',
      success: 201,
      setup: (ctx) => freshMember(ctx, 'orgA'),
      params: id,
      body: (ctx) => ({ orgId: ctx.ids.orgB, roleId: ctx.ids.readerRoleB }),
      expect: inOrgB('users:write'),
    },
    {
      target: 'a member of organization B joining organization A',
      success: 201,
      setup: (ctx) => freshMember(ctx, 'orgB'),
      params: id,
      body: (ctx) => ({ orgId: ctx.ids.orgA, roleId: ctx.ids.readerRoleA }),
      // The customer and the limited technician do not see a user of organization B.
      expect: inOrgB('users:write'),
    },
  ],
  'PATCH /api/v1/users/{id}/memberships/{orgId}': [
    {
      target: 'a membership in organization A',
      success: 200,
      setup: (ctx) => freshMember(ctx, 'orgA'),
      params: (ctx, s) => ({ id: s.id, orgId: ctx.ids.orgA }),
      body: (ctx) => ({ roleId: ctx.ids.adminRoleA }),
      expect: inOrgA('users:write'),
    },
    {
      target: 'a membership in organization B',
      success: 200,
      setup: (ctx) => freshMember(ctx, 'orgB'),
      params: (ctx, s) => ({ id: s.id, orgId: ctx.ids.orgB }),
      body: (ctx) => ({ roleId: ctx.ids.adminRoleB }),
      expect: inOrgB('users:write'),
    },
  ],
  'DELETE /api/v1/users/{id}/memberships/{orgId}': [
    { target: 'a membership in organization A', success: 200, setup: (ctx) => freshMember(ctx, 'orgA'), params: (ctx, s) => ({ id: s.id, orgId: ctx.ids.orgA }), expect: inOrgA('users:write') },
    { target: 'a membership in organization B', success: 200, setup: (ctx) => freshMember(ctx, 'orgB'), params: (ctx, s) => ({ id: s.id, orgId: ctx.ids.orgB }), expect: inOrgB('users:write') },
  ],
  'POST /api/v1/partner-memberships': [
    {
      target: 'a technician of organization A',
      success: 201,
      body: (ctx) => ({ email: `${ctx.uniq('tech')}@matrix.example`, name: 'New Tech', roleId: ctx.ids.limitedTechRole, orgAccess: 'selected', orgIds: [ctx.ids.orgA] }),
      expect: signedIn('users:write', { customer: PARTNER_SCOPE, otherPartner: NOT_FOUND }),
    },
    {
      // A limited technician hands out no reach he lacks.
      target: 'a technician of organization B',
      success: 201,
      body: (ctx) => ({ email: `${ctx.uniq('tech')}@matrix.example`, name: 'New Tech', roleId: ctx.ids.limitedTechRole, orgAccess: 'selected', orgIds: [ctx.ids.orgB] }),
      expect: signedIn('users:write', { customer: PARTNER_SCOPE, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }),
    },
    {
      target: 'a technician of every organization',
      success: 201,
      body: (ctx) => ({ email: `${ctx.uniq('tech')}@matrix.example`, name: 'New Tech', roleId: ctx.ids.limitedTechRole, orgAccess: 'all' }),
      expect: signedIn('users:write', { customer: PARTNER_SCOPE, orgTech: PRIVILEGE_ESCALATION, otherPartner: NOT_FOUND }),
    },
  ],
  'GET /api/v1/invitations': [{ target: "the caller's own invitations", success: 200, expect: signedIn(null, { apiKey: USER_REQUIRED }) }],
  'POST /api/v1/invitations/{id}/accept': [
    {
      target: "an invitation addressed to the caller's person",
      success: 200,
      setup: (ctx, caller) => invitation(ctx, 'orgInviteAccept', personOf(ctx, caller)),
      params: id,
      // Only the invited person, signed in, answers an invitation; never a key acting for them.
      expect: signedIn(null, { apiKey: USER_REQUIRED }),
    },
    {
      target: "an invitation addressed to someone else",
      success: 200,
      setup: (ctx) => invitation(ctx, 'orgInviteAccept', ctx.ids.memberB),
      params: id,
      expect: signedIn(null, { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, otherPartner: NOT_FOUND, apiKey: USER_REQUIRED }),
    },
  ],
  'DELETE /api/v1/invitations/{id}': [
    {
      target: "an invitation addressed to the caller's person",
      success: 200,
      setup: (ctx, caller) => invitation(ctx, 'orgInviteDecline', personOf(ctx, caller)),
      params: id,
      expect: signedIn(null, { apiKey: USER_REQUIRED }),
    },
    {
      target: 'an invitation addressed to someone else',
      success: 200,
      setup: (ctx) => invitation(ctx, 'orgInviteDecline', ctx.ids.memberB),
      params: id,
      expect: signedIn(null, { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, otherPartner: NOT_FOUND, apiKey: USER_REQUIRED }),
    },
  ],

  // ---- login branding (partner-wide)
  'GET /api/v1/partners/me/login-branding': [{ target: "the caller's partner", success: 200, expect: signedIn(null, { customer: PARTNER_SCOPE }) }],
  'PUT /api/v1/partners/me/login-branding': [
    {
      target: "the caller's partner",
      success: 200,
      body: () => ({ headline: 'Welcome back', accentColor: '#123456', logoUrl: null }),
      expect: newPartnerWide('policies:write'),
    },
  ],

  // ---- SSO providers
  'GET /api/v1/sso/presets': [{ target: 'the presets', success: 200, expect: signedIn(null) }],
  'GET /api/v1/sso/providers': [
    { target: 'the providers of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA(null) },
    { target: 'the providers of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB(null) },
    {
      target: "the caller's partner providers",
      success: 200,
      query: () => ({ scope: 'partner' }),
      hides: [
        { from: ['orgTech', 'allTech', 'partnerAdmin', 'apiKey'], ids: (ctx) => [ctx.ids.otherProvider] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.ssoProviderP] },
      ],
      expect: signedIn(null, { customer: PARTNER_SCOPE }),
    },
  ],
  'POST /api/v1/sso/providers': [
    { target: 'a provider of organization A', success: 201, body: (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgA }), expect: inOrgA('organizations:write') },
    { target: 'a provider of organization B', success: 201, body: (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write') },
    {
      target: 'a partner-owned provider',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', ownerScope: 'partner', trustsIdpMfa: true }),
      expect: newPartnerWide('organizations:write'),
    },
    {
      // Provisioned users of organization A never get a role of organization B.
      target: 'a provider of organization A whose default role is a role of organization B',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgA, defaultRoleId: ctx.ids.adminRoleB }),
      expect: inOrgA('organizations:write', {
        customer: [400, 'invalid_default_role'],
        orgTech: [400, 'invalid_default_role'],
        partnerAdmin: [400, 'invalid_default_role'],
        apiKey: [400, 'invalid_default_role'],
      }),
    },
  ],
  'GET /api/v1/sso/providers/{id}': [
    { target: 'a provider of organization A', success: 200, params: of('ssoProviderA'), expect: inOrgA(null) },
    { target: 'a provider of organization B', success: 200, params: of('ssoProviderB'), expect: inOrgB(null) },
    { target: 'a partner-owned provider', success: 200, params: of('ssoProviderP'), expect: signedIn(null, { customer: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'PATCH /api/v1/sso/providers/{id}': [
    {
      target: 'a provider of organization A',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgA })),
      params: id,
      body: () => ({ trustsIdpMfa: true }),
      expect: inOrgA('organizations:write'),
    },
    {
      target: 'a provider of organization B',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgB })),
      params: id,
      body: () => ({ trustsIdpMfa: true }),
      expect: inOrgB('organizations:write'),
    },
    {
      target: 'a partner-owned provider',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', ownerScope: 'partner' })),
      params: id,
      body: () => ({ trustsIdpMfa: true }),
      expect: partnerWide('organizations:write', { customer: NOT_FOUND }),
    },
  ],
  // SAML service-provider settings (issue 16): Single Logout, encrypted assertions, the SP keys.
  'GET /api/v1/sso/saml/providers/{providerId}/sp-settings': [
    { target: 'a provider of organization A', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderA }), expect: inOrgA(null) },
    { target: 'a provider of organization B', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderB }), expect: inOrgB(null) },
    { target: 'a partner-owned provider', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderP }), expect: signedIn(null, { customer: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'PUT /api/v1/sso/saml/providers/{providerId}/sp-settings': [
    { target: 'a provider of organization A', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderA }), body: () => ({ requireEncryptedAssertions: false }), expect: inOrgA('organizations:write') },
    { target: 'a provider of organization B', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderB }), body: () => ({ requireEncryptedAssertions: false }), expect: inOrgB('organizations:write') },
    {
      target: 'a partner-owned provider',
      success: 200,
      params: (ctx) => ({ providerId: ctx.ids.ssoProviderP }),
      body: () => ({ requireEncryptedAssertions: false }),
      expect: partnerWide('organizations:write', { customer: NOT_FOUND }),
    },
  ],
  'POST /api/v1/sso/saml/providers/{providerId}/sp-keys/rotate': [
    { target: 'a provider of organization A', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderA }), expect: inOrgA('organizations:write') },
    { target: 'a provider of organization B', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderB }), expect: inOrgB('organizations:write') },
    { target: 'a partner-owned provider', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderP }), expect: partnerWide('organizations:write', { customer: NOT_FOUND }) },
  ],
  'DELETE /api/v1/sso/providers/{id}': [
    {
      target: 'a provider of organization A',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgA })),
      params: id,
      expect: inOrgA('organizations:write'),
    },
    {
      target: 'a provider of organization B',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgB })),
      params: id,
      expect: inOrgB('organizations:write'),
    },
    {
      target: 'a partner-owned provider',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', ownerScope: 'partner' })),
      params: id,
      expect: partnerWide('organizations:write', { customer: NOT_FOUND }),
    },
  ],
  'POST /api/v1/sso/providers/{id}/status': [
    {
      target: 'a provider of organization A',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgA })),
      params: id,
      body: () => ({ status: 'testing' }),
      expect: inOrgA('organizations:write'),
    },
    {
      target: 'a provider of organization B',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', orgId: ctx.ids.orgB })),
      params: id,
      body: () => ({ status: 'testing' }),
      expect: inOrgB('organizations:write'),
    },
    {
      target: 'a partner-owned provider',
      success: 200,
      setup: fresh('/sso/providers', 'provider', (ctx) => ({ name: ctx.uniq('IdP'), type: 'saml', ownerScope: 'partner' })),
      params: id,
      body: () => ({ status: 'testing' }),
      expect: partnerWide('organizations:write', { customer: NOT_FOUND }),
    },
  ],
  // A SAML provider without an SSO URL is answered "not configured" before any network call.
  'POST /api/v1/sso/providers/{id}/test': [
    { target: 'a provider of organization A', success: 200, params: of('ssoProviderA'), expect: inOrgA('organizations:write') },
    { target: 'a provider of organization B', success: 200, params: of('ssoProviderB'), expect: inOrgB('organizations:write') },
    // Testing changes nothing: every technician who reads the provider may test it.
    { target: 'a partner-owned provider', success: 200, params: of('ssoProviderP'), expect: signedIn('organizations:write', { customer: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'GET /api/v1/sso/check/{orgId}': [{ target: 'organization A', success: 200, params: (ctx) => ({ orgId: ctx.ids.orgA }), expect: PUBLIC() }],

  // ---- SCIM connections and group-to-role mappings (issue 16). Configuring them hands a
  // credential to an IdP, so only a signed-in person does it (an API key is refused: 403 forbidden);
  // partner connections are credentials of the whole partner, out of sight of a limited technician.
  'GET /api/v1/scim/connections': [
    { target: 'the connections of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('organizations:write') },
    { target: 'the connections of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write') },
    {
      target: "the caller's partner connections",
      success: 200,
      query: () => ({ scope: 'partner' }),
      hides: [
        { from: ['orgTech'], ids: (ctx) => [ctx.ids.scimConnP, ctx.ids.otherScimConn] },
        { from: ['partnerAdmin', 'apiKey'], ids: (ctx) => [ctx.ids.otherScimConn] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.scimConnP] },
      ],
      expect: signedIn('organizations:write', { customer: PARTNER_SCOPE }),
    },
  ],
  'POST /api/v1/scim/connections': [
    { target: 'a connection of organization A', success: 201, body: (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgA }), expect: inOrgA('organizations:write', { apiKey: FORBIDDEN }) },
    { target: 'a connection of organization B', success: 201, body: (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write', { apiKey: FORBIDDEN }) },
    {
      target: 'a partner connection',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('Directory'), ownerScope: 'partner' }),
      expect: newPartnerWide('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      // Users an organization A connection creates never get a role of organization B.
      target: 'a connection of organization A whose default role is a role of organization B',
      success: 201,
      body: (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgA, defaultRoleId: ctx.ids.adminRoleB }),
      expect: inOrgA('organizations:write', { customer: [400, 'invalid_default_role'], orgTech: [400, 'invalid_default_role'], partnerAdmin: [400, 'invalid_default_role'], apiKey: FORBIDDEN }),
    },
  ],
  'GET /api/v1/scim/connections/{id}': [
    { target: 'a connection of organization A', success: 200, params: of('scimConnA'), expect: inOrgA('organizations:write') },
    { target: 'a connection of organization B', success: 200, params: of('scimConnB'), expect: inOrgB('organizations:write') },
    { target: 'a partner connection', success: 200, params: of('scimConnP'), expect: signedIn('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'POST /api/v1/scim/connections/{id}/rotate': [
    {
      target: 'a connection of organization A',
      success: 201,
      setup: fresh('/scim/connections', 'connection', (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgA })),
      params: id,
      expect: inOrgA('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a connection of organization B',
      success: 201,
      setup: fresh('/scim/connections', 'connection', (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgB })),
      params: id,
      expect: inOrgB('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a partner connection',
      success: 201,
      setup: fresh('/scim/connections', 'connection', (ctx) => ({ name: ctx.uniq('Directory'), ownerScope: 'partner' })),
      params: id,
      expect: signedIn('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND, apiKey: FORBIDDEN }),
    },
  ],
  // Revoking only takes a credential away, so an API key may do it, as it may revoke API keys.
  'DELETE /api/v1/scim/connections/{id}': [
    {
      target: 'a connection of organization A',
      success: 200,
      setup: fresh('/scim/connections', 'connection', (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgA })),
      params: id,
      expect: inOrgA('organizations:write'),
    },
    {
      target: 'a connection of organization B',
      success: 200,
      setup: fresh('/scim/connections', 'connection', (ctx) => ({ name: ctx.uniq('Directory'), orgId: ctx.ids.orgB })),
      params: id,
      expect: inOrgB('organizations:write'),
    },
    {
      target: 'a partner connection',
      success: 200,
      setup: fresh('/scim/connections', 'connection', (ctx) => ({ name: ctx.uniq('Directory'), ownerScope: 'partner' })),
      params: id,
      expect: signedIn('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }),
    },
  ],
  'GET /api/v1/scim/connections/{id}/group-mappings': [
    { target: 'a connection of organization A', success: 200, params: of('scimConnA'), expect: inOrgA('organizations:write') },
    { target: 'a connection of organization B', success: 200, params: of('scimConnB'), expect: inOrgB('organizations:write') },
    { target: 'a partner connection', success: 200, params: of('scimConnP'), expect: signedIn('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'PUT /api/v1/scim/connections/{id}/group-mappings': [
    {
      target: 'a connection of organization A, mapping a group to a role of organization A',
      success: 200,
      params: of('scimConnA'),
      body: (ctx) => ({ mappings: [{ group: 'Readers', roleId: ctx.ids.readerRoleA, siteIds: [ctx.ids.siteA1] }] }),
      expect: inOrgA('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a connection of organization B, mapping a group to a role of organization B',
      success: 200,
      params: of('scimConnB'),
      body: (ctx) => ({ mappings: [{ group: 'Readers', roleId: ctx.ids.readerRoleB }] }),
      expect: inOrgB('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a connection of organization A, mapping a group to a role of organization B',
      success: 200,
      params: of('scimConnA'),
      body: (ctx) => ({ mappings: [{ group: 'Admins', roleId: ctx.ids.adminRoleB }] }),
      expect: inOrgA('organizations:write', { customer: [400, 'invalid_default_role'], orgTech: [400, 'invalid_default_role'], partnerAdmin: [400, 'invalid_default_role'], apiKey: FORBIDDEN }),
    },
    {
      target: 'a partner connection, mapping a group to a partner role',
      success: 200,
      params: of('scimConnP'),
      body: (ctx) => ({ mappings: [{ group: 'Field technicians', roleId: ctx.ids.limitedTechRole }] }),
      expect: signedIn('organizations:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND, apiKey: FORBIDDEN }),
    },
  ],
  'GET /api/v1/sso/providers/{id}/group-mappings': [
    { target: 'a provider of organization A', success: 200, params: of('ssoProviderA'), expect: inOrgA('organizations:write') },
    { target: 'a provider of organization B', success: 200, params: of('ssoProviderB'), expect: inOrgB('organizations:write') },
    // Whoever reads the partner provider reads its mappings; changing them is partner-wide.
    { target: 'a partner-owned provider', success: 200, params: of('ssoProviderP'), expect: signedIn('organizations:write', { customer: NOT_FOUND, otherPartner: NOT_FOUND }) },
  ],
  'PUT /api/v1/sso/providers/{id}/group-mappings': [
    {
      target: 'a provider of organization A, mapping a group to a role of organization A',
      success: 200,
      params: of('ssoProviderA'),
      body: (ctx) => ({ mappings: [{ group: 'Readers', roleId: ctx.ids.readerRoleA, siteIds: [ctx.ids.siteA1] }] }),
      expect: inOrgA('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a provider of organization B, mapping a group to a role of organization B',
      success: 200,
      params: of('ssoProviderB'),
      body: (ctx) => ({ mappings: [{ group: 'Readers', roleId: ctx.ids.readerRoleB }] }),
      expect: inOrgB('organizations:write', { apiKey: FORBIDDEN }),
    },
    {
      target: 'a provider of organization A, mapping a group to a site of organization B',
      success: 200,
      params: of('ssoProviderA'),
      body: (ctx) => ({ mappings: [{ group: 'Readers', roleId: ctx.ids.readerRoleA, siteIds: [ctx.ids.siteB1] }] }),
      expect: inOrgA('organizations:write', { customer: [400, 'validation_failed'], orgTech: [400, 'validation_failed'], partnerAdmin: [400, 'validation_failed'], apiKey: FORBIDDEN }),
    },
    {
      target: 'a partner-owned provider, mapping a group to a partner role',
      success: 200,
      params: of('ssoProviderP'),
      body: (ctx) => ({ mappings: [{ group: 'Field technicians', roleId: ctx.ids.limitedTechRole }] }),
      expect: partnerWide('organizations:write', { customer: NOT_FOUND, apiKey: FORBIDDEN }),
    },
  ],

  // ---- SSO domains
  'GET /api/v1/sso/domains': [
    {
      target: "the caller's domains",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.ssoDomainB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.ssoDomainA, ctx.ids.ssoDomainB] },
      ],
      expect: own('organizations:write'),
    },
    { target: 'the domains of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('organizations:write') },
    { target: 'the domains of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write') },
  ],
  'POST /api/v1/sso/domains': [
    { target: 'a domain for organization A', success: 201, body: (ctx) => ({ domain: `${ctx.uniq('claim')}.example`, orgId: ctx.ids.orgA }), expect: inOrgA('organizations:write') },
    { target: 'a domain for organization B', success: 201, body: (ctx) => ({ domain: `${ctx.uniq('claim')}.example`, orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write') },
  ],
  'POST /api/v1/sso/domains/{id}/verify': [
    { target: 'a published domain of organization A', success: 200, setup: (ctx) => publishedDomain(ctx, 'orgA'), params: id, expect: inOrgA('organizations:write') },
    { target: 'a published domain of organization B', success: 200, setup: (ctx) => publishedDomain(ctx, 'orgB'), params: id, expect: inOrgB('organizations:write') },
  ],
  'DELETE /api/v1/sso/domains/{id}': [
    {
      target: 'a domain of organization A',
      success: 200,
      setup: fresh('/sso/domains', 'domain', (ctx) => ({ domain: `${ctx.uniq('drop')}.example`, orgId: ctx.ids.orgA })),
      params: id,
      expect: inOrgA('organizations:write'),
    },
    {
      target: 'a domain of organization B',
      success: 200,
      setup: fresh('/sso/domains', 'domain', (ctx) => ({ domain: `${ctx.uniq('drop')}.example`, orgId: ctx.ids.orgB })),
      params: id,
      expect: inOrgB('organizations:write'),
    },
  ],

  // ---- contacts
  'GET /api/v1/contacts': [
    {
      target: "the caller's contacts",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.contactB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.contactA, ctx.ids.contactB] },
      ],
      expect: own('contacts:read'),
    },
    { target: 'the contacts of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('contacts:read') },
    { target: 'the contacts of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('contacts:read') },
  ],
  'POST /api/v1/contacts': [
    { target: 'a contact of organization A', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgA, name: 'New Contact' }), expect: inOrgA('contacts:write') },
    { target: 'a contact of organization B', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgB, name: 'New Contact' }), expect: inOrgB('contacts:write') },
  ],
  'GET /api/v1/contacts/{id}': [
    { target: 'a contact of organization A', success: 200, params: of('contactA'), expect: inOrgA('contacts:read') },
    { target: 'a contact of organization B', success: 200, params: of('contactB'), expect: inOrgB('contacts:read') },
  ],
  'PATCH /api/v1/contacts/{id}': [
    { target: 'a contact of organization A', success: 200, params: of('contactA'), body: () => ({ title: 'CTO' }), expect: inOrgA('contacts:write') },
    { target: 'a contact of organization B', success: 200, params: of('contactB'), body: () => ({ title: 'CTO' }), expect: inOrgB('contacts:write') },
  ],
  'DELETE /api/v1/contacts/{id}': [
    { target: 'a contact of organization A', success: 200, setup: fresh('/contacts', 'contact', (ctx) => ({ orgId: ctx.ids.orgA, name: 'Doomed' })), params: id, expect: inOrgA('contacts:write') },
    { target: 'a contact of organization B', success: 200, setup: fresh('/contacts', 'contact', (ctx) => ({ orgId: ctx.ids.orgB, name: 'Doomed' })), params: id, expect: inOrgB('contacts:write') },
  ],

  // ---- custom fields
  'GET /api/v1/custom-fields': [
    {
      target: "the caller's custom fields",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.customFieldB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.customFieldA, ctx.ids.customFieldB, ctx.ids.customFieldP] },
      ],
      expect: own('custom-fields:read'),
    },
    { target: 'the fields of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('custom-fields:read') },
    { target: 'the fields of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('custom-fields:read') },
  ],
  'POST /api/v1/custom-fields': [
    { target: 'a field of organization A', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgA, key: fieldKey(ctx), name: 'Field', type: 'text' }), expect: inOrgA('custom-fields:write') },
    { target: 'a field of organization B', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgB, key: fieldKey(ctx), name: 'Field', type: 'text' }), expect: inOrgB('custom-fields:write') },
    { target: 'a partner-wide field', success: 201, body: (ctx) => ({ scope: 'partner', key: fieldKey(ctx), name: 'Field', type: 'text' }), expect: newPartnerWide('custom-fields:write') },
  ],
  'GET /api/v1/custom-fields/{id}': [
    { target: 'a field of organization A', success: 200, params: of('customFieldA'), expect: inOrgA('custom-fields:read') },
    { target: 'a field of organization B', success: 200, params: of('customFieldB'), expect: inOrgB('custom-fields:read') },
    // Partner-wide content is read by every organization of the partner.
    { target: 'a partner-wide field', success: 200, params: of('customFieldP'), expect: inOrgA('custom-fields:read') },
  ],
  'PATCH /api/v1/custom-fields/{id}': [
    { target: 'a field of organization A', success: 200, params: of('customFieldA'), body: () => ({ description: 'Inventory tag' }), expect: inOrgA('custom-fields:write') },
    { target: 'a field of organization B', success: 200, params: of('customFieldB'), body: () => ({ description: 'Inventory tag' }), expect: inOrgB('custom-fields:write') },
    { target: 'a partner-wide field', success: 200, params: of('customFieldP'), body: () => ({ description: 'Warranty end' }), expect: partnerWide('custom-fields:write') },
  ],
  'DELETE /api/v1/custom-fields/{id}': [
    {
      target: 'a field of organization A',
      success: 200,
      setup: fresh('/custom-fields', 'customField', (ctx) => ({ orgId: ctx.ids.orgA, key: fieldKey(ctx), name: 'Doomed', type: 'text' })),
      params: id,
      expect: inOrgA('custom-fields:write'),
    },
    {
      target: 'a field of organization B',
      success: 200,
      setup: fresh('/custom-fields', 'customField', (ctx) => ({ orgId: ctx.ids.orgB, key: fieldKey(ctx), name: 'Doomed', type: 'text' })),
      params: id,
      expect: inOrgB('custom-fields:write'),
    },
    {
      target: 'a partner-wide field',
      success: 200,
      setup: fresh('/custom-fields', 'customField', (ctx) => ({ scope: 'partner', key: fieldKey(ctx), name: 'Doomed', type: 'text' })),
      params: id,
      expect: partnerWide('custom-fields:write'),
    },
  ],
  'GET /api/v1/devices/{deviceId}/custom-fields': [
    { target: 'device A1', success: 200, params: (ctx) => ({ deviceId: ctx.ids.deviceA1 }), expect: inOrgA('custom-fields:read') },
    { target: 'device B1', success: 200, params: (ctx) => ({ deviceId: ctx.ids.deviceB1 }), expect: inOrgB('custom-fields:read') },
  ],
  'PUT /api/v1/devices/{deviceId}/custom-fields/{definitionId}': [
    {
      target: "device A1's value of an organization A field",
      success: 200,
      params: (ctx) => ({ deviceId: ctx.ids.deviceA1, definitionId: ctx.ids.customFieldA }),
      body: () => ({ value: 'TAG-A1' }),
      expect: inOrgA('custom-fields:write'),
    },
    {
      // The value belongs to the device's organization, even for a partner-wide field.
      target: "device A1's value of a partner-wide field",
      success: 200,
      params: (ctx) => ({ deviceId: ctx.ids.deviceA1, definitionId: ctx.ids.customFieldP }),
      body: () => ({ value: '2030-01-01' }),
      expect: inOrgA('custom-fields:write'),
    },
    {
      target: "device B1's value of an organization B field",
      success: 200,
      params: (ctx) => ({ deviceId: ctx.ids.deviceB1, definitionId: ctx.ids.customFieldB }),
      body: () => ({ value: 'TAG-B1' }),
      expect: inOrgB('custom-fields:write'),
    },
    {
      // A field of organization B never applies to a device of organization A; a caller who cannot see it does not learn it exists.
      target: "device A1's value of an organization B field",
      success: 200,
      params: (ctx) => ({ deviceId: ctx.ids.deviceA1, definitionId: ctx.ids.customFieldB }),
      body: () => ({ value: 'TAG-X' }),
      expect: inOrgB('custom-fields:write', { partnerAdmin: [400, 'custom_field_not_applicable'], apiKey: [400, 'custom_field_not_applicable'] }),
    },
  ],
  'DELETE /api/v1/devices/{deviceId}/custom-fields/{definitionId}': [
    {
      target: "device A2's value of an organization A field",
      success: 200,
      setup: async (ctx) => ctx.admin.create(`/devices/${ctx.ids.deviceA2}/custom-fields/${ctx.ids.customFieldA}`, { value: 'TAG-A2' }, 'put'),
      params: (ctx) => ({ deviceId: ctx.ids.deviceA2, definitionId: ctx.ids.customFieldA }),
      expect: inOrgA('custom-fields:write'),
    },
    {
      target: "device B1's value of an organization B field",
      success: 200,
      setup: async (ctx) => ctx.admin.create(`/devices/${ctx.ids.deviceB1}/custom-fields/${ctx.ids.customFieldB}`, { value: 'TAG-B1' }, 'put'),
      params: (ctx) => ({ deviceId: ctx.ids.deviceB1, definitionId: ctx.ids.customFieldB }),
      expect: inOrgB('custom-fields:write'),
    },
  ],

  // ---- scripts
  'GET /api/v1/scripts': [
    {
      target: "the caller's scripts",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.scriptB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.scriptA, ctx.ids.scriptB, ctx.ids.scriptP] },
      ],
      expect: own('scripts:read'),
    },
    { target: 'the scripts of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('scripts:read') },
    { target: 'the scripts of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('scripts:read') },
  ],
  'POST /api/v1/scripts': [
    { target: 'a script of organization A', success: 201, body: (ctx) => script(ctx, { orgId: ctx.ids.orgA }), expect: inOrgA('scripts:write') },
    { target: 'a script of organization B', success: 201, body: (ctx) => script(ctx, { orgId: ctx.ids.orgB }), expect: inOrgB('scripts:write') },
    { target: 'a partner-wide script', success: 201, body: (ctx) => script(ctx, { availability: 'partner' }), expect: newPartnerWide('scripts:write') },
  ],
  'GET /api/v1/scripts/{id}': [
    { target: 'a script of organization A', success: 200, params: of('scriptA'), expect: inOrgA('scripts:read') },
    { target: 'a script of organization B', success: 200, params: of('scriptB'), expect: inOrgB('scripts:read') },
    { target: 'a partner-wide script', success: 200, params: of('scriptP'), expect: inOrgA('scripts:read') },
  ],
  'PATCH /api/v1/scripts/{id}': [
    { target: 'a script of organization A', success: 200, params: of('scriptA'), body: () => ({ description: 'Says hi' }), expect: inOrgA('scripts:write') },
    { target: 'a script of organization B', success: 200, params: of('scriptB'), body: () => ({ description: 'Says hi' }), expect: inOrgB('scripts:write') },
    {
      target: 'a partner-wide script',
      success: 200,
      setup: fresh('/scripts', 'script', (ctx) => script(ctx, { availability: 'partner' })),
      params: id,
      body: () => ({ body: 'Invoke-Something' }),
      expect: partnerWide('scripts:write'),
    },
  ],
  'DELETE /api/v1/scripts/{id}': [
    { target: 'a script of organization A', success: 200, setup: fresh('/scripts', 'script', (ctx) => script(ctx, { orgId: ctx.ids.orgA })), params: id, expect: inOrgA('scripts:write') },
    { target: 'a script of organization B', success: 200, setup: fresh('/scripts', 'script', (ctx) => script(ctx, { orgId: ctx.ids.orgB })), params: id, expect: inOrgB('scripts:write') },
    { target: 'a partner-wide script', success: 200, setup: fresh('/scripts', 'script', (ctx) => script(ctx, { availability: 'partner' })), params: id, expect: partnerWide('scripts:write') },
  ],

  // ---- policies and assignments
  'GET /api/v1/policies': [
    {
      target: "the caller's policies",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.policyB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.policyA, ctx.ids.policyB, ctx.ids.policyP] },
      ],
      expect: own('policies:read'),
    },
    { target: 'the policies of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('policies:read') },
    { target: 'the policies of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('policies:read') },
  ],
  'POST /api/v1/policies': [
    { target: 'a policy of organization A', success: 201, body: (ctx) => policy(ctx, { orgId: ctx.ids.orgA }), expect: inOrgA('policies:write') },
    { target: 'a policy of organization B', success: 201, body: (ctx) => policy(ctx, { orgId: ctx.ids.orgB }), expect: inOrgB('policies:write') },
    { target: 'a partner-wide policy', success: 201, body: (ctx) => policy(ctx, { scope: 'partner' }), expect: newPartnerWide('policies:write') },
  ],
  'GET /api/v1/policies/{id}': [
    { target: 'a policy of organization A', success: 200, params: of('policyA'), expect: inOrgA('policies:read') },
    { target: 'a policy of organization B', success: 200, params: of('policyB'), expect: inOrgB('policies:read') },
    {
      target: 'a partner-wide policy',
      success: 200,
      params: of('policyP'),
      // Its assignment in organization B is out of the customer's and the limited technician's reach.
      hides: [{ from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.assignmentPB] }],
      expect: inOrgA('policies:read'),
    },
  ],
  'PATCH /api/v1/policies/{id}': [
    { target: 'a policy of organization A', success: 200, params: of('policyA'), body: () => ({ description: 'Baseline' }), expect: inOrgA('policies:write') },
    { target: 'a policy of organization B', success: 200, params: of('policyB'), body: () => ({ description: 'Baseline' }), expect: inOrgB('policies:write') },
    {
      target: 'a partner-wide policy',
      success: 200,
      setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { scope: 'partner' })),
      params: id,
      body: () => ({ features: { agent: { autoUpdate: false } } }),
      expect: partnerWide('policies:write'),
    },
  ],
  'DELETE /api/v1/policies/{id}': [
    { target: 'a policy of organization A', success: 200, setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { orgId: ctx.ids.orgA })), params: id, expect: inOrgA('policies:write') },
    { target: 'a policy of organization B', success: 200, setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { orgId: ctx.ids.orgB })), params: id, expect: inOrgB('policies:write') },
    { target: 'a partner-wide policy', success: 200, setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { scope: 'partner' })), params: id, expect: partnerWide('policies:write') },
  ],
  'GET /api/v1/policies/{id}/assignments': [
    { target: 'a policy of organization A', success: 200, params: of('policyA'), expect: inOrgA('policies:read') },
    { target: 'a policy of organization B', success: 200, params: of('policyB'), expect: inOrgB('policies:read') },
    {
      target: 'a partner-wide policy',
      success: 200,
      params: of('policyP'),
      hides: [{ from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.assignmentPB] }],
      expect: inOrgA('policies:read'),
    },
  ],
  'POST /api/v1/policies/{id}/assignments': [
    {
      target: 'a policy of organization A on organization A',
      success: 201,
      setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { orgId: ctx.ids.orgA })),
      params: id,
      body: (ctx) => ({ targetType: 'organization', targetId: ctx.ids.orgA }),
      expect: inOrgA('policies:write'),
    },
    {
      target: 'a policy of organization B on organization B',
      success: 201,
      setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { orgId: ctx.ids.orgB })),
      params: id,
      body: (ctx) => ({ targetType: 'organization', targetId: ctx.ids.orgB }),
      expect: inOrgB('policies:write'),
    },
    {
      target: 'a partner-wide policy at partner level',
      success: 201,
      setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { scope: 'partner' })),
      params: id,
      body: (ctx) => ({ targetType: 'partner', targetId: ctx.ids.partner }),
      expect: partnerWide('policies:write'),
    },
    {
      // A partner policy is changed, wherever it is assigned, only by a caller who reaches every organization.
      target: 'a partner-wide policy on organization A',
      success: 201,
      setup: fresh('/policies', 'policy', (ctx) => policy(ctx, { scope: 'partner' })),
      params: id,
      body: (ctx) => ({ targetType: 'organization', targetId: ctx.ids.orgA }),
      expect: partnerWide('policies:write'),
    },
  ],
  'DELETE /api/v1/policies/{id}/assignments/{assignmentId}': [
    {
      target: 'an assignment of a policy of organization A',
      success: 200,
      setup: async (ctx) => {
        const p = await fresh('/policies', 'policy', (c) => policy(c, { orgId: c.ids.orgA }))(ctx);
        const a = await ctx.admin.create(`/policies/${p.id}/assignments`, { targetType: 'organization', targetId: ctx.ids.orgA });
        return { id: p.id, assignmentId: a.assignment.id };
      },
      params: (ctx, s) => s,
      expect: inOrgA('policies:write'),
    },
    {
      target: 'an assignment of a policy of organization B',
      success: 200,
      setup: async (ctx) => {
        const p = await fresh('/policies', 'policy', (c) => policy(c, { orgId: c.ids.orgB }))(ctx);
        const a = await ctx.admin.create(`/policies/${p.id}/assignments`, { targetType: 'organization', targetId: ctx.ids.orgB });
        return { id: p.id, assignmentId: a.assignment.id };
      },
      params: (ctx, s) => s,
      expect: inOrgB('policies:write'),
    },
    {
      target: 'the partner-level assignment of a partner-wide policy',
      success: 200,
      setup: async (ctx) => {
        const p = await fresh('/policies', 'policy', (c) => policy(c, { scope: 'partner' }))(ctx);
        const a = await ctx.admin.create(`/policies/${p.id}/assignments`, { targetType: 'partner', targetId: ctx.ids.partner });
        return { id: p.id, assignmentId: a.assignment.id };
      },
      params: (ctx, s) => s,
      expect: partnerWide('policies:write'),
    },
  ],

  // ---- dynamic groups
  'GET /api/v1/dynamic-groups': [
    {
      target: "the caller's dynamic groups",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.dynamicGroupB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.dynamicGroupA, ctx.ids.dynamicGroupB] },
      ],
      expect: own('policies:read'),
    },
    { target: 'the groups of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('policies:read') },
    { target: 'the groups of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('policies:read') },
  ],
  'POST /api/v1/dynamic-groups': [
    { target: 'a group of organization A', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Dynamic'), filter }), expect: inOrgA('policies:write') },
    { target: 'a group of organization B', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Dynamic'), filter }), expect: inOrgB('policies:write') },
  ],
  'GET /api/v1/dynamic-groups/{id}': [
    { target: 'a group of organization A', success: 200, params: of('dynamicGroupA'), expect: inOrgA('policies:read') },
    { target: 'a group of organization B', success: 200, params: of('dynamicGroupB'), expect: inOrgB('policies:read') },
  ],
  'PATCH /api/v1/dynamic-groups/{id}': [
    { target: 'a group of organization A', success: 200, params: of('dynamicGroupA'), body: () => ({ filter }), expect: inOrgA('policies:write') },
    { target: 'a group of organization B', success: 200, params: of('dynamicGroupB'), body: () => ({ filter }), expect: inOrgB('policies:write') },
  ],
  'DELETE /api/v1/dynamic-groups/{id}': [
    {
      target: 'a group of organization A',
      success: 200,
      setup: fresh('/dynamic-groups', 'group', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Dynamic'), filter })),
      params: id,
      expect: inOrgA('policies:write'),
    },
    {
      target: 'a group of organization B',
      success: 200,
      setup: fresh('/dynamic-groups', 'group', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Dynamic'), filter })),
      params: id,
      expect: inOrgB('policies:write'),
    },
  ],
  'GET /api/v1/dynamic-groups/{id}/members': [
    { target: 'a group of organization A', success: 200, params: of('dynamicGroupA'), expect: inOrgA('policies:read') },
    { target: 'a group of organization B', success: 200, params: of('dynamicGroupB'), expect: inOrgB('policies:read') },
  ],

  // ---- imports
  'POST /api/v1/imports': [
    {
      target: 'a contacts CSV for organization A',
      success: 202,
      query: (ctx) => ({ type: 'contacts', orgId: ctx.ids.orgA }),
      contentType: 'text/csv',
      body: (ctx) => `externalId,name\n${ctx.uniq('csv')},Imported Person\n`,
      expect: inOrgA('imports:write'),
    },
    {
      target: 'a contacts CSV for organization B',
      success: 202,
      query: (ctx) => ({ type: 'contacts', orgId: ctx.ids.orgB }),
      contentType: 'text/csv',
      body: (ctx) => `externalId,name\n${ctx.uniq('csv')},Imported Person\n`,
      expect: inOrgB('imports:write'),
    },
    {
      target: 'a partner-wide interchange document',
      success: 202,
      body: () => ({ format: 'rmm-interchange', version: 1, source: { system: 'matrix' }, customers: [] }),
      expect: newPartnerWide('imports:write'),
    },
  ],
  'GET /api/v1/imports': [
    {
      target: "the caller's imports",
      success: 200,
      hides: [
        { from: ['customer'], ids: (ctx) => [ctx.ids.importB, ctx.ids.importP] },
        // The partner-wide import wrote into organization B: what it reports is out of his reach.
        { from: ['orgTech'], ids: (ctx) => [ctx.ids.importB, ctx.ids.importP] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.importA, ctx.ids.importB, ctx.ids.importP] },
      ],
      expect: own('imports:write'),
    },
  ],
  'GET /api/v1/imports/{id}': [
    { target: 'an import of organization A', success: 200, params: of('importA'), expect: inOrgA('imports:write') },
    { target: 'an import of organization B', success: 200, params: of('importB'), expect: inOrgB('imports:write') },
    {
      // Its report names the contacts it wrote into organization B: like a partner-wide key, it is invisible to a limited technician.
      target: 'a partner-wide import that wrote into organization B',
      success: 200,
      params: of('importP'),
      hides: [{ from: ['orgTech'], ids: (ctx) => [ctx.ids.importSecret] }],
      expect: signedIn('imports:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }),
    },
  ],
  'GET /api/v1/imports/{id}/matches': [
    { target: 'an import of organization A', success: 200, params: of('importA'), expect: inOrgA('imports:write') },
    { target: 'an import of organization B', success: 200, params: of('importB'), expect: inOrgB('imports:write') },
    {
      target: 'a partner-wide import that wrote into organization B',
      success: 200,
      params: of('importP'),
      expect: signedIn('imports:write', { customer: NOT_FOUND, orgTech: NOT_FOUND, otherPartner: NOT_FOUND }),
    },
  ],
  'POST /api/v1/imports/{id}/matches/{matchId}/acknowledge': [
    {
      target: 'a held-back contact of organization A',
      success: 200,
      setup: async (ctx) => ({ id: ctx.ids.importA, matchId: await pendingMatch(ctx, 'importA', 'orgA') }),
      params: (ctx, s) => s,
      body: () => ({ action: 'create' }),
      expect: inOrgA('imports:write'),
    },
    {
      target: 'a held-back contact of organization B',
      success: 200,
      setup: async (ctx) => ({ id: ctx.ids.importB, matchId: await pendingMatch(ctx, 'importB', 'orgB') }),
      params: (ctx, s) => s,
      body: () => ({ action: 'create' }),
      expect: inOrgB('imports:write'),
    },
  ],

  // ---- SSO sign-in (public; a success needs a browser and an IdP round trip)
  'GET /api/v1/sso/login/partner/{partnerId}': [
    { target: 'a partner without an active provider', success: 404, params: (ctx) => ({ partnerId: ctx.ids.partner }), expect: PUBLIC([404, 'not_found']) },
  ],
  'GET /api/v1/sso/login/{orgId}': [
    { target: 'an organization without an active provider', success: 404, params: (ctx) => ({ orgId: ctx.ids.orgA }), expect: PUBLIC([404, 'not_found']) },
  ],
  'GET /api/v1/sso/callback': [
    { target: 'a callback without its state cookie', success: 302, location: '/login?error=invalid_callback', query: () => ({ code: 'x', state: 'y' }), expect: PUBLIC() },
  ],
  'POST /api/v1/sso/exchange': [{ target: 'an unknown code', success: 400, body: () => ({ code: 'not-a-code' }), expect: PUBLIC([400, 'invalid_exchange_code']) }],
  // Sign-out (issue 16): the caller's own session; an API key has none to end.
  'POST /api/v1/sso/logout': [
    { target: "the caller's own session", success: 200, bearer: (ctx, s, caller) => ctx.freshBearer(caller), body: () => ({}), expect: signedIn(null, { apiKey: FORBIDDEN }) },
  ],
  'GET /api/v1/sso/logout/callback': [{ target: 'the return from the identity provider', success: 302, location: '/devices', query: () => ({ state: '/devices' }), expect: PUBLIC() }],
  'POST /api/v1/sso/logout/backchannel/{providerId}': [
    {
      target: 'an unknown provider',
      success: 404,
      params: () => ({ providerId: '00000000-0000-4000-8000-000000000000' }),
      contentType: 'application/x-www-form-urlencoded',
      body: () => 'logout_token=x',
      expect: PUBLIC([404, 'not_found']),
    },
  ],
  'GET /api/v1/auth/login-context': [{ target: 'the login page', success: 200, expect: PUBLIC() }],
  'POST /api/v1/auth/sso-discovery': [{ target: 'an address of an unverified domain', success: 200, body: (ctx) => ({ email: `someone@${ctx.uniq('nowhere')}.example` }), expect: PUBLIC() }],
  'GET /api/v1/sso/link/options': [{ target: "the caller's tenant", success: 200, expect: signedIn(null) }],
  'POST /api/v1/sso/link/start/{providerId}': [
    {
      // Linking is person-only (item 3); the provider is inactive, so a person is told it is not linkable.
      target: 'an inactive provider of organization A',
      success: 404,
      params: (ctx) => ({ providerId: ctx.ids.ssoProviderA }),
      expect: signedIn(null, { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, otherPartner: NOT_FOUND, apiKey: FORBIDDEN }),
    },
  ],
  'GET /api/v1/sso/saml/metadata/{providerId}': [{ target: 'a SAML provider of organization A', success: 200, params: (ctx) => ({ providerId: ctx.ids.ssoProviderA }), expect: PUBLIC() }],
  'GET /api/v1/sso/saml/login/partner/{partnerId}': [
    { target: 'a partner without an active SAML provider', success: 404, params: (ctx) => ({ partnerId: ctx.ids.partner }), expect: PUBLIC([404, 'not_found']) },
  ],
  'GET /api/v1/sso/saml/login/{orgId}': [
    { target: 'an organization without an active SAML provider', success: 404, params: (ctx) => ({ orgId: ctx.ids.orgA }), expect: PUBLIC([404, 'not_found']) },
  ],
  'GET /api/v1/sso/saml/slo/{providerId}': [
    { target: 'a request carrying no logout message', success: 302, location: '/login?error=sso_error', params: (ctx) => ({ providerId: ctx.ids.ssoProviderA }), expect: PUBLIC() },
  ],
  'POST /api/v1/sso/saml/acs': [
    { target: 'a post without RelayState', success: 302, location: '/login?error=invalid_callback', contentType: 'application/x-www-form-urlencoded', body: () => 'SAMLResponse=x', expect: PUBLIC() },
  ],

  // ---- agents
  'POST /api/v1/agents/{id}/elevation-requests': [
    { target: "device A1's own path", success: 201, params: (ctx) => ({ id: ctx.agentId('deviceA1') }), body: () => prompt(), expect: AGENT_ONLY },
    // A token used on another agent's path is as good as no token, in its own organization too.
    { target: "device A2's path", success: 201, params: (ctx) => ({ id: ctx.agentId('deviceA2') }), body: () => prompt(), expect: every(UNAUTHENTICATED) },
    { target: "device B1's path", success: 201, params: (ctx) => ({ id: ctx.agentId('deviceB1') }), body: () => prompt(), expect: every(UNAUTHENTICATED) },
  ],
  'GET /api/v1/agents/{id}/pam-settings': [
    { target: "device A1's own path", success: 200, params: (ctx) => ({ id: ctx.agentId('deviceA1') }), expect: AGENT_ONLY },
    { target: "device B1's path", success: 200, params: (ctx) => ({ id: ctx.agentId('deviceB1') }), expect: every(UNAUTHENTICATED) },
  ],
  'GET /api/v1/agents/{id}/commands': [
    { target: "device A1's own path", success: 200, params: (ctx) => ({ id: ctx.agentId('deviceA1') }), expect: AGENT_ONLY },
    { target: "device A2's path", success: 200, params: (ctx) => ({ id: ctx.agentId('deviceA2') }), expect: every(UNAUTHENTICATED) },
    { target: "device B1's path", success: 200, params: (ctx) => ({ id: ctx.agentId('deviceB1') }), expect: every(UNAUTHENTICATED) },
  ],
  'POST /api/v1/agents/{id}/commands/{commandId}/ack': [
    { target: 'a command of device A1 on its own path', success: 200, setup: (ctx) => queuedCommand(ctx, 'deviceA1'), params: (ctx, s) => ({ id: ctx.agentId('deviceA1'), commandId: s.id }), expect: AGENT_ONLY },
    {
      target: "a command of device A2 on device A1's path",
      success: 200,
      setup: (ctx) => queuedCommand(ctx, 'deviceA2'),
      params: (ctx, s) => ({ id: ctx.agentId('deviceA1'), commandId: s.id }),
      expect: { ...AGENT_ONLY, agent: NOT_FOUND },
    },
    {
      target: "a command of device B1 on device A1's path",
      success: 200,
      setup: (ctx) => queuedCommand(ctx, 'deviceB1'),
      params: (ctx, s) => ({ id: ctx.agentId('deviceA1'), commandId: s.id }),
      expect: { ...AGENT_ONLY, agent: NOT_FOUND },
    },
    { target: "a command of device B1 on device B1's path", success: 200, setup: (ctx) => queuedCommand(ctx, 'deviceB1'), params: (ctx, s) => ({ id: ctx.agentId('deviceB1'), commandId: s.id }), expect: every(UNAUTHENTICATED) },
  ],
  'POST /api/v1/agents/{id}/commands/{commandId}/result': [
    {
      target: "a command of device A1 on its own path",
      success: 200,
      setup: (ctx) => queuedCommand(ctx, 'deviceA1'),
      params: (ctx, s) => ({ id: ctx.agentId('deviceA1'), commandId: s.id }),
      body: () => ({ status: 'completed' }),
      expect: AGENT_ONLY,
    },
    {
      target: "a command of device B1 on device A1's path",
      success: 200,
      setup: (ctx) => queuedCommand(ctx, 'deviceB1'),
      params: (ctx, s) => ({ id: ctx.agentId('deviceA1'), commandId: s.id }),
      body: () => ({ status: 'completed' }),
      expect: { ...AGENT_ONLY, agent: NOT_FOUND },
    },
    {
      target: "a command of device A2 on device A1's path",
      success: 200,
      setup: (ctx) => queuedCommand(ctx, 'deviceA2'),
      params: (ctx, s) => ({ id: ctx.agentId('deviceA1'), commandId: s.id }),
      body: () => ({ status: 'completed' }),
      expect: { ...AGENT_ONLY, agent: NOT_FOUND },
    },
    {
      target: "a command of device B1 on device B1's path",
      success: 200,
      setup: (ctx) => queuedCommand(ctx, 'deviceB1'),
      params: (ctx, s) => ({ id: ctx.agentId('deviceB1'), commandId: s.id }),
      body: () => ({ status: 'completed' }),
      expect: every(UNAUTHENTICATED),
    },
  ],

  // ---- elevation requests
  'GET /api/v1/pam/elevation-requests': [
    {
      target: "the caller's requests",
      success: 200,
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => [ctx.ids.elevationB, ctx.ids.activeB] },
        { from: ['otherPartner'], ids: (ctx) => [ctx.ids.elevationA, ctx.ids.elevationB, ctx.ids.activeB] },
      ],
      expect: own('devices:read'),
    },
    { target: 'the requests of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('devices:read') },
    { target: 'the requests of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('devices:read') },
  ],
  'GET /api/v1/pam/active': [
    {
      target: "the caller's active elevations",
      success: 200,
      hides: [{ from: ['customer', 'orgTech', 'otherPartner'], ids: (ctx) => [ctx.ids.activeB] }],
      expect: own('devices:read'),
    },
  ],
  'GET /api/v1/pam/elevation-requests/{id}': [
    { target: 'a request of organization A', success: 200, params: of('elevationA'), expect: inOrgA('devices:read') },
    { target: 'a request of organization B', success: 200, params: of('elevationB'), expect: inOrgB('devices:read') },
  ],
  'POST /api/v1/pam/elevation-requests/{id}/respond': [
    {
      target: 'a pending prompt of organization A',
      success: 200,
      setup: async (ctx) => ({ id: await ctx.elevation({ org: 'orgA' }) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgA('devices:execute'),
    },
    {
      target: 'a pending prompt of organization B',
      success: 200,
      setup: async (ctx) => ({ id: await ctx.elevation({ org: 'orgB' }) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgB('devices:execute'),
    },
    {
      target: "someone else's just-in-time request",
      success: 200,
      setup: async (ctx) => ({ id: await ctx.elevation({ org: 'orgA', flowType: 'tech_jit_admin', subjectUserId: ctx.ids.memberA }) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgA('devices:execute'),
    },
    {
      // Item 3: the key acts for its creator, so approving the creator's own request is self-approval.
      target: "the just-in-time request of the caller's own person",
      success: 200,
      setup: async (ctx, caller) => ({ id: await ctx.elevation({ org: 'orgA', flowType: 'tech_jit_admin', subjectUserId: ctx.userId(caller) }) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgA('devices:execute', { customer: SELF_APPROVAL, orgTech: SELF_APPROVAL, allTech: SELF_APPROVAL, partnerAdmin: SELF_APPROVAL, apiKey: SELF_APPROVAL }),
    },
  ],
  'POST /api/v1/pam/elevation-requests/{id}/revoke': [
    {
      target: 'an approved elevation of organization A',
      success: 200,
      setup: async (ctx) => ({ id: await ctx.elevation({ org: 'orgA', status: 'approved' }) }),
      params: id,
      body: () => ({ reason: 'no longer needed' }),
      expect: inOrgA('devices:execute'),
    },
    {
      target: 'an approved elevation of organization B',
      success: 200,
      setup: async (ctx) => ({ id: await ctx.elevation({ org: 'orgB', status: 'approved' }) }),
      params: id,
      body: () => ({ reason: 'no longer needed' }),
      expect: inOrgB('devices:execute'),
    },
  ],

  // ---- mobile approvals (person-only)
  'POST /api/v1/mobile-devices': [
    { target: "the caller's own phone", success: 201, body: (ctx) => ({ platform: 'android', pushToken: ctx.uniq('push') }), expect: signedIn(null, { apiKey: USER_REQUIRED }) },
  ],
  'GET /api/v1/mobile-devices': [{ target: "the caller's own phones", success: 200, expect: signedIn(null, { apiKey: USER_REQUIRED }) }],
  'DELETE /api/v1/mobile-devices/{id}': [
    { target: "a phone of the caller's own person", success: 200, setup: (ctx, caller) => phoneOf(ctx, personOf(ctx, caller)), params: id, expect: signedIn(null, { apiKey: USER_REQUIRED }) },
    {
      target: "another person's phone",
      success: 200,
      setup: (ctx) => phoneOf(ctx, ctx.ids.memberA),
      params: id,
      expect: signedIn(null, { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, otherPartner: NOT_FOUND, apiKey: USER_REQUIRED }),
    },
  ],
  'GET /api/v1/approvals': [{ target: "the caller's own approval requests", success: 200, expect: own('devices:execute', { apiKey: USER_REQUIRED }) }],
  'POST /api/v1/approvals/{id}/decide': [
    {
      target: "an approval request addressed to the caller's person",
      success: 200,
      setup: async (ctx, caller) => ({ id: await ctx.approvalFor(personOf(ctx, caller)) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgA('devices:execute', { apiKey: USER_REQUIRED }),
    },
    {
      // Item 3 on the phone path: approving one's own just-in-time request is self-approval there too.
      target: "an approval request of the caller's own just-in-time request",
      success: 200,
      setup: async (ctx, caller) => ({ id: await ctx.approvalFor(personOf(ctx, caller), { flowType: 'tech_jit_admin', subjectUserId: personOf(ctx, caller) }) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgA('devices:execute', { customer: SELF_APPROVAL, orgTech: SELF_APPROVAL, allTech: SELF_APPROVAL, partnerAdmin: SELF_APPROVAL, apiKey: USER_REQUIRED }),
    },
    {
      target: 'an approval request addressed to someone else',
      success: 200,
      setup: async (ctx) => ({ id: await ctx.approvalFor(ctx.ids.memberA) }),
      params: id,
      body: () => ({ decision: 'approve' }),
      expect: inOrgA('devices:execute', { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, apiKey: USER_REQUIRED }),
    },
  ],
  'POST /api/v1/devices/{id}/actuate-elevation': [
    {
      target: 'device A1 and its approved prompt',
      success: 201,
      setup: async (ctx) => ({ requestId: await ctx.elevation({ org: 'orgA', status: 'approved' }) }),
      params: (ctx) => ({ id: ctx.ids.deviceA1 }),
      body: (ctx, s) => ({ elevationRequestId: s.requestId, timeoutMs: 8000 }),
      expect: inOrgA('devices:execute'),
    },
    {
      target: "device A1 and an approved prompt of device B1",
      success: 201,
      setup: async (ctx) => ({ requestId: await ctx.elevation({ org: 'orgB', status: 'approved' }) }),
      params: (ctx) => ({ id: ctx.ids.deviceA1 }),
      body: (ctx, s) => ({ elevationRequestId: s.requestId, timeoutMs: 8000 }),
      expect: inOrgA('devices:execute', { customer: NOT_FOUND, orgTech: NOT_FOUND, allTech: NOT_FOUND, partnerAdmin: NOT_FOUND, apiKey: NOT_FOUND }),
    },
    {
      target: 'device B1 and its approved prompt',
      success: 201,
      setup: async (ctx) => ({ requestId: await ctx.elevation({ org: 'orgB', status: 'approved' }) }),
      params: (ctx) => ({ id: ctx.ids.deviceB1 }),
      body: (ctx, s) => ({ elevationRequestId: s.requestId, timeoutMs: 8000 }),
      expect: inOrgB('devices:execute'),
    },
  ],

  // ---- PAM rules, signer groups, configuration
  'GET /api/v1/pam/rules': [
    { target: 'the rules of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('devices:read') },
    { target: 'the rules of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('devices:read') },
  ],
  'POST /api/v1/pam/rules': [
    {
      target: 'a rule of organization A',
      success: 201,
      body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Rule'), verdict: 'require_approval', matchPathGlob: 'C:\\Tools\\**' }),
      expect: inOrgA('devices:write'),
    },
    {
      target: 'a rule of organization B',
      success: 201,
      body: (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Rule'), verdict: 'require_approval', matchPathGlob: 'C:\\Tools\\**' }),
      expect: inOrgB('devices:write'),
    },
    {
      target: 'a rule of organization A naming a signer group of organization B',
      success: 201,
      body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Rule'), verdict: 'auto_approve', matchSignerGroupId: ctx.ids.signerGroupB }),
      expect: inOrgA('devices:write', {
        customer: [400, 'validation_failed'],
        orgTech: [400, 'validation_failed'],
        allTech: [400, 'validation_failed'],
        partnerAdmin: [400, 'validation_failed'],
        apiKey: [400, 'validation_failed'],
      }),
    },
  ],
  'POST /api/v1/pam/rules/preview': [
    { target: 'a draft for organization A', success: 200, body: (ctx) => ({ orgId: ctx.ids.orgA, matchPathGlob: 'C:\\Program Files\\**' }), expect: inOrgA('devices:write') },
    { target: 'a draft for organization B', success: 200, body: (ctx) => ({ orgId: ctx.ids.orgB, matchPathGlob: 'C:\\Program Files\\**' }), expect: inOrgB('devices:write') },
  ],
  'PATCH /api/v1/pam/rules/{id}': [
    { target: 'a rule of organization A', success: 200, params: of('ruleA'), body: () => ({ priority: 50 }), expect: inOrgA('devices:write') },
    { target: 'a rule of organization B', success: 200, params: of('ruleB'), body: () => ({ priority: 50 }), expect: inOrgB('devices:write') },
  ],
  'DELETE /api/v1/pam/rules/{id}': [
    {
      target: 'a rule of organization A',
      success: 200,
      setup: fresh('/pam/rules', 'rule', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Rule'), verdict: 'auto_deny', matchSigner: 'Evil Corp' })),
      params: id,
      expect: inOrgA('devices:write'),
    },
    {
      target: 'a rule of organization B',
      success: 200,
      setup: fresh('/pam/rules', 'rule', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Rule'), verdict: 'auto_deny', matchSigner: 'Evil Corp' })),
      params: id,
      expect: inOrgB('devices:write'),
    },
  ],
  'GET /api/v1/pam/signer-groups': [
    { target: 'the signer groups of organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('devices:read') },
    { target: 'the signer groups of organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('devices:read') },
  ],
  'POST /api/v1/pam/signer-groups': [
    { target: 'a signer group of organization A', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Signers'), signers: ['Contoso Ltd'] }), expect: inOrgA('devices:write') },
    { target: 'a signer group of organization B', success: 201, body: (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Signers'), signers: ['Contoso Ltd'] }), expect: inOrgB('devices:write') },
  ],
  'PATCH /api/v1/pam/signer-groups/{id}': [
    { target: 'a signer group of organization A', success: 200, params: of('signerGroupA'), body: () => ({ description: 'Vendors' }), expect: inOrgA('devices:write') },
    { target: 'a signer group of organization B', success: 200, params: of('signerGroupB'), body: () => ({ description: 'Vendors' }), expect: inOrgB('devices:write') },
  ],
  'DELETE /api/v1/pam/signer-groups/{id}': [
    {
      target: 'a signer group of organization A',
      success: 200,
      setup: fresh('/pam/signer-groups', 'signerGroup', (ctx) => ({ orgId: ctx.ids.orgA, name: ctx.uniq('Signers'), signers: ['X'] })),
      params: id,
      expect: inOrgA('devices:write'),
    },
    {
      target: 'a signer group of organization B',
      success: 200,
      setup: fresh('/pam/signer-groups', 'signerGroup', (ctx) => ({ orgId: ctx.ids.orgB, name: ctx.uniq('Signers'), signers: ['X'] })),
      params: id,
      expect: inOrgB('devices:write'),
    },
  ],
  'GET /api/v1/pam/config': [
    { target: 'organization A', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgA }), expect: inOrgA('devices:read') },
    { target: 'organization B', success: 200, query: (ctx) => ({ orgId: ctx.ids.orgB }), expect: inOrgB('devices:read') },
  ],
  'PUT /api/v1/pam/config': [
    { target: 'organization A', success: 200, body: (ctx) => ({ orgId: ctx.ids.orgA, defaultUnmatchedVerdict: 'require_approval' }), expect: inOrgA('devices:write') },
    { target: 'organization B', success: 200, body: (ctx) => ({ orgId: ctx.ids.orgB, defaultUnmatchedVerdict: 'require_approval' }), expect: inOrgB('devices:write') },
  ],

  // ---- just-in-time and tool-action flows
  'POST /api/v1/pam/jit-requests': [
    {
      // Filing a just-in-time request is person-only (item 3).
      target: 'device A1',
      success: 201,
      body: (ctx) => ({ deviceId: ctx.ids.deviceA1, durationMinutes: 30, reason: 'Maintenance window' }),
      expect: inOrgA('devices:execute', { apiKey: USER_REQUIRED }),
    },
    {
      target: 'device B1',
      success: 201,
      body: (ctx) => ({ deviceId: ctx.ids.deviceB1, durationMinutes: 30, reason: 'Maintenance window' }),
      expect: inOrgB('devices:execute', { apiKey: USER_REQUIRED }),
    },
  ],
  'POST /api/v1/pam/tool-actions': [
    { target: 'device A1', success: 201, body: (ctx) => ({ deviceId: ctx.ids.deviceA1, toolName: 'shell', input: { command: 'dir' } }), expect: inOrgA('devices:execute') },
    { target: 'device B1', success: 201, body: (ctx) => ({ deviceId: ctx.ids.deviceB1, toolName: 'shell', input: { command: 'dir' } }), expect: inOrgB('devices:execute') },
  ],
  // ---- webhooks (a subscription forwards audit events: reads need audit:read, changes organizations:write and MFA)
  'GET /api/v1/webhooks/subscriptions': [
    {
      target: "the caller's subscriptions",
      success: 200,
      setup: (ctx) => hooks(ctx),
      hides: [
        { from: ['customer', 'orgTech'], ids: (ctx) => hookIds(ctx, ['B', 'P']) },
        { from: ['otherPartner'], ids: (ctx) => hookIds(ctx, ['A', 'B', 'P']) },
      ],
      expect: own('audit:read'),
    },
  ],
  'POST /api/v1/webhooks/subscriptions': [
    { target: 'a subscription of organization A', success: 201, body: (ctx) => hook({ orgId: ctx.ids.orgA }), expect: inOrgA('organizations:write') },
    { target: 'a subscription of organization B', success: 201, body: (ctx) => hook({ orgId: ctx.ids.orgB }), expect: inOrgB('organizations:write') },
    { target: 'a partner subscription', success: 201, body: () => hook({ scope: 'partner' }), expect: newPartnerWide('organizations:write') },
  ],
  'GET /api/v1/webhooks/subscriptions/{id}': hookRoutes(200, false, hookId, undefined, false),
  'PATCH /api/v1/webhooks/subscriptions/{id}': hookRoutes(200, false, hookId, () => ({ description: 'Matrix' }), true),
  'DELETE /api/v1/webhooks/subscriptions/{id}': hookRoutes(200, true, hookId, undefined, true),
  'POST /api/v1/webhooks/subscriptions/{id}/rotate-secret': hookRoutes(200, false, hookId, () => ({ overlapMinutes: 5 }), true),
  'GET /api/v1/webhooks/subscriptions/{id}/deliveries': hookRoutes(200, false, hookId, undefined, false),
  'POST /api/v1/webhooks/subscriptions/{id}/messages/{messageId}/redeliver': hookRoutes(202, false, hookMessage, () => ({}), true),
};
