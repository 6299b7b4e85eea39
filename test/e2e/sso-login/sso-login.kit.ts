/**
 * Helpers for the OIDC sign-in e2e tests: providers written straight into the database (the
 * client secret sealed as the service seals it), the browserless round trip against a test
 * IdP, and what a test asserts on afterwards (sessions, audit rows, redirects).
 *
 * The service runs with PUBLIC_URL http://localhost:3000, so the IdP sends the "browser" back
 * to that address; the kit takes the callback's query from there and replays it against the
 * app under test with the state cookie the login start set. Each login start comes from a
 * fresh client address (X-Forwarded-For, trusted from loopback), so the per-IP limits of the
 * login routes do not get in the way of tests that are not about them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { SecretBoxService } from '../../../src/infra/crypto/secret-box.service';
import { clientSecretContext } from '../../../src/modules/sso/providers/sso-provider.types';
import { browserlessAuthorize, OidcOpHandle, startOidcOp } from '../../support/idp/oidc-op';
import { tenantFixture } from '../../factories/tenant.factory';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

export const CALLBACK_URL = 'http://localhost:3000/api/v1/sso/callback';
export const OP_CLIENT_ID = 'rmm-e2e';
export const OP_CLIENT_SECRET = 'e2e-client-secret-0123456789-abcdefghijklmnop';

/** How long a file's beforeAll may take to boot the app and the OP child on a busy machine. */
export const BOOT_TIMEOUT_MS = 120_000;

/** The test OP, with room for a slow start when the machine is busy. */
export function startOp(): Promise<OidcOpHandle> {
  return startOidcOp({ startTimeoutMs: 90_000 });
}

/** A client address of its own, for X-Forwarded-For. */
export function freshIp(): string {
  const b = randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

export interface ProviderInput {
  orgId?: string;
  partnerId?: string;
  name?: string;
  type?: 'oidc' | 'saml';
  status?: 'active' | 'inactive' | 'testing';
  issuer?: string | null;
  clientId?: string | null;
  clientSecret?: string | null;
  authorizationUrl?: string | null;
  tokenUrl?: string | null;
  userInfoUrl?: string | null;
  jwksUrl?: string | null;
  scopes?: string;
  attributeMapping?: Record<string, string>;
  autoProvision?: boolean;
  defaultRoleId?: string | null;
  defaultRoleSetBy?: string | null;
  allowedDomains?: string | null;
  enforceSso?: boolean;
  trustsIdpMfa?: boolean;
  createdAt?: string;
  /**
   * The administrator who configured it (sign-in admits only accounts whose permissions they hold);
   * default: a `*` administrator of the owner.
   */
  configuredBy?: string | null;
}

export function opEndpoints(op: OidcOpHandle): ProviderInput {
  return {
    issuer: op.issuer,
    clientId: OP_CLIENT_ID,
    clientSecret: OP_CLIENT_SECRET,
    authorizationUrl: op.authorizationEndpoint,
    tokenUrl: op.tokenEndpoint,
    userInfoUrl: op.userinfoEndpoint,
    jwksUrl: op.jwksUrl,
  };
}

export function rogueEndpoints(idp: RogueOidcIdp): ProviderInput {
  return {
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    authorizationUrl: idp.authorizationEndpoint,
    tokenUrl: idp.tokenEndpoint,
    userInfoUrl: idp.userinfoEndpoint,
    jwksUrl: idp.jwksUrl,
  };
}

/** Registers the service as a client of the test OP (client_secret_basic, as the service sends it). */
export function registerWithOp(op: OidcOpHandle, callbackUrl = CALLBACK_URL): Promise<void> {
  return op.addClient({
    client_id: OP_CLIENT_ID,
    client_secret: OP_CLIENT_SECRET,
    redirect_uris: [callbackUrl],
    token_endpoint_auth_method: 'client_secret_basic',
  });
}

/**
 * SQL for the administrator recorded as a provider's configurer when a test does not name one: a
 * `*` administrator of the owner on every site (an organization member first, else an
 * all-organization technician), so that sign-in admits every account of the owner (a provider signs
 * in only accounts its configurer has authority over, sites included). `$2` is the organization id and
 * `$3` the partner id of the insert.
 */
export function configurerSql(param: string): string {
  return `coalesce(${param}::uuid, (
       SELECT x.u FROM (
         SELECT m.user_id AS u, 0 AS rank FROM organization_memberships m JOIN roles r ON r.org_id = m.org_id AND r.id = m.role_id
          WHERE m.org_id = $2 AND '*' = ANY (r.permissions) AND NOT m.site_restricted
         UNION ALL
         SELECT pm.user_id, 1 FROM partner_memberships pm JOIN roles r ON r.partner_id = pm.partner_id AND r.id = pm.role_id
          WHERE pm.partner_id = coalesce($3, (SELECT o.partner_id FROM organizations o WHERE o.id = $2)) AND pm.org_access = 'all' AND '*' = ANY (r.permissions) AND NOT pm.site_restricted
       ) x ORDER BY x.rank LIMIT 1))`;
}

/** `query` runs as the owner of the app's database (the shared test database unless given). */
export async function insertProvider(t: Pick<TestApp, 'app'>, p: ProviderInput, query: (sql: string, params: unknown[]) => Promise<unknown> = ownerQuery): Promise<string> {
  const id = randomUUID();
  const sealed = p.clientSecret ? t.app.get(SecretBoxService).encrypt(p.clientSecret, clientSecretContext(id)) : null;
  const partner = !!p.partnerId;
  await query(
    `INSERT INTO sso_providers (id, org_id, partner_id, name, type, status, issuer, client_id, client_secret, authorization_url, token_url,
       userinfo_url, jwks_url, scopes, attribute_mapping, auto_provision, default_role_id, default_role_set_by, allowed_domains, enforce_sso,
       trusts_idp_mfa, created_at, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, coalesce($22::timestamptz, now()),
       ${configurerSql('$23')})`,
    [
      id,
      p.orgId ?? null,
      p.partnerId ?? null,
      p.name ?? `Provider ${id.slice(0, 8)}`,
      p.type ?? 'oidc',
      p.status ?? 'active',
      p.issuer ?? null,
      p.clientId ?? null,
      sealed,
      p.authorizationUrl ?? null,
      p.tokenUrl ?? null,
      p.userInfoUrl ?? null,
      p.jwksUrl ?? null,
      p.scopes ?? 'openid profile email',
      JSON.stringify(p.attributeMapping ?? { email: 'email', name: 'name' }),
      partner ? false : (p.autoProvision ?? true),
      p.defaultRoleId ?? null,
      p.defaultRoleSetBy ?? null,
      p.allowedDomains ?? null,
      p.enforceSso ?? false,
      p.trustsIdpMfa ?? false,
      p.createdAt ?? null,
      p.configuredBy ?? null,
    ],
  );
  return id;
}

export async function verifyDomain(orgId: string, domain: string): Promise<void> {
  await ownerQuery(
    `INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_seen_at) VALUES ($1, $2, $3, true, now(), now())`,
    [orgId, domain, randomBytes(16).toString('hex')],
  );
}

export interface Started {
  status: number;
  /** Where the service sent the browser (the IdP's authorization endpoint). */
  location: string;
  /** `svc_sso_state=…`, ready for a Cookie header. */
  cookie: string;
  setCookie: string;
  body: Record<string, unknown>;
}

export async function startLogin(t: TestApp, path: string, ip = freshIp()): Promise<Started> {
  const res = await request(t.http).get(path).set('X-Forwarded-For', ip);
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('svc_sso_state=')) ?? '';
  return { status: res.status, location: res.headers.location ?? '', cookie: setCookie.split(';')[0], setCookie, body: res.body };
}

export interface CallbackAnswer {
  status: number;
  location: string;
  setCookie: string[];
}

/** Replays the IdP's redirect (a URL on PUBLIC_URL) against the app, as the browser holding `cookie`. */
export async function callback(t: TestApp, idpRedirect: string, cookie?: string): Promise<CallbackAnswer> {
  const url = new URL(idpRedirect);
  let req = request(t.http).get(`/api/v1/sso/callback${url.search}`);
  if (cookie) req = req.set('Cookie', cookie);
  const res = await req;
  return { status: res.status, location: res.headers.location ?? '', setCookie: ([] as string[]).concat(res.headers['set-cookie'] ?? []) };
}

/** Start, IdP round trip (the IdP must be ready to sign someone in), and the callback with the same cookie. */
export async function roundTrip(t: TestApp, loginPath: string): Promise<CallbackAnswer & { started: Started; idpRedirect: string }> {
  const started = await startLogin(t, loginPath);
  if (started.status !== 302) throw new Error(`login start answered ${started.status}: ${JSON.stringify(started.body)}`);
  const idpRedirect = await browserlessAuthorize(started.location);
  return { ...(await callback(t, idpRedirect, started.cookie)), started, idpRedirect };
}

export function exchangeCodeOf(location: string): string | null {
  const match = /#ssoCode=([A-Za-z0-9_-]+)$/.exec(location);
  return match ? match[1] : null;
}

export function exchange(t: TestApp, code: string) {
  return request(t.http).post('/api/v1/sso/exchange').set('X-Forwarded-For', freshIp()).send({ code });
}

export async function sessionCount(userId: string): Promise<number> {
  const [row] = await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM sessions WHERE user_id = $1`, [userId]);
  return Number(row.n);
}

/** Sessions minted through one provider, and the exchange codes still waiting for them. */
export async function mintedThrough(providerId: string): Promise<{ sessions: number; codes: number }> {
  const [row] = await ownerQuery<{ sessions: string; codes: string }>(
    `SELECT (SELECT count(*) FROM sessions WHERE sso_provider_id = $1) AS sessions,
            (SELECT count(*) FROM sso_exchange_codes c JOIN sessions s ON s.id = c.session_id WHERE s.sso_provider_id = $1) AS codes`,
    [providerId],
  );
  return { sessions: Number(row.sessions), codes: Number(row.codes) };
}

/** The audit rows about one provider's sign-ins, newest first. */
export function auditOf(providerId: string, action?: string): Promise<{ action: string; details: Record<string, string>; org_id: string | null; partner_id: string | null }[]> {
  return ownerQuery(
    `SELECT action, details, org_id, partner_id FROM audit_logs WHERE resource_id = $1 ${action ? 'AND action = $2' : ''} ORDER BY created_at DESC, id DESC`,
    action ? [providerId, action] : [providerId],
  );
}

export function bumpGeneration(providerId: string): Promise<unknown> {
  return ownerQuery(`UPDATE sso_providers SET generation = generation + 1 WHERE id = $1`, [providerId]);
}

/**
 * The setup of the rogue-IdP suites: a test app with a tenant, the repository's rogue IdP, and an
 * organization provider of organization A pointing at it that asserts admin A (whose password
 * account links by email on the organization's verified domain).
 */
export async function rogueProviderWorld(): Promise<{ t: TestApp; idp: RogueOidcIdp; ids: Record<string, string>; provider: string }> {
  const [t, idp] = await Promise.all([startTestApp(), startRogueOidcIdp()]);
  const f = tenantFixture();
  const ids = await t.seed(f);
  await verifyDomain(ids.orgA, f.emails.adminA.split('@')[1]);
  const provider = await insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp) });
  idp.setClaims({ sub: 'rogue-admin', email: f.emails.adminA, email_verified: true, name: 'Admin A' });
  return { t, idp, ids, provider };
}
