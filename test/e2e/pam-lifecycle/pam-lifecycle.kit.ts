import request from 'supertest';
import { NO_SCOPE } from '../../../src/infra/database/tenant-scope';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { ApprovalFanoutService } from '../../../src/modules/pam/approvals/approval-fanout.service';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

export type Fixture = ReturnType<typeof tenantFixture>;

export interface PamWorld {
  t: TestApp;
  f: Fixture;
  ids: Record<string, string>;
  /** MFA-satisfied access tokens by fixture user key. */
  mfa: Record<string, string>;
  /** Access tokens without MFA by fixture user key. */
  plain: Record<string, string>;
  /** The agent id of each fixture device key (the `:id` of /agents/:id/...). */
  agentIds: Record<string, string>;
  agentTokens: Record<string, string>;
}

const USERS = ['adminA', 'readerA', 'siteA1User', 'adminB', 'tech', 'techA'] as const;

/** The full app on its own port (races need real parallel connections), seeded with the tenant fixture. */
export async function startPamWorld(env: Record<string, string> = {}, fixture: Fixture = tenantFixture()): Promise<PamWorld> {
  const t = await startTestApp({ PAM_ACTUATOR_ENABLED: 'true', ...env }, { listen: true });
  const ids = await t.seed(fixture);
  const mfa: Record<string, string> = {};
  const plain: Record<string, string> = {};
  for (const key of USERS) {
    mfa[key] = await t.token(ids[key], { mfa: true });
    plain[key] = await t.token(ids[key]);
  }
  const agentIds: Record<string, string> = {};
  const agentTokens: Record<string, string> = {};
  for (const d of fixture.devices ?? []) {
    agentIds[d.key] = d.agentId!;
    agentTokens[d.key] = d.agentToken!;
  }
  return { t, f: fixture, ids, mfa, plain, agentIds, agentTokens };
}

export interface RequestSeed {
  org?: string;
  device?: string;
  site?: string;
  flowType?: 'uac_intercept' | 'tech_jit_admin' | 'ai_tool_action';
  status?: string;
  /** Minutes before now the request was made (default 0). */
  ageMinutes?: number;
  /** Minutes from now the elevation window ends (negative: already ended); null: no window. */
  expiresInMinutes?: number | null;
  subjectUsername?: string;
  subjectUserId?: string | null;
  path?: string;
  signer?: string;
  decisionSource?: string | null;
  pamRuleName?: string | null;
  matchedPolicyName?: string | null;
  toolName?: string | null;
  riskTier?: number | null;
  actionDigest?: string | null;
  actuated?: boolean;
}

const DEVICE_SITE: Record<string, [string, string]> = {
  deviceA1: ['orgA', 'siteA1'],
  deviceA2: ['orgA', 'siteA2'],
  deviceB1: ['orgB', 'siteB1'],
};

/** Writes an elevation request as agent ingest would have (as the owner, bypassing the API). */
export async function seedRequest(w: PamWorld, s: RequestSeed = {}): Promise<string> {
  const device = s.device ?? 'deviceA1';
  const [org, site] = DEVICE_SITE[device];
  const status = s.status ?? 'pending';
  const active = ['approved', 'auto_approved', 'actuating'].includes(status);
  const expiresIn = s.expiresInMinutes === undefined ? (active ? 15 : null) : s.expiresInMinutes;
  const [row] = await ownerQuery<{ id: string }>(
    `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, subject_user_id,
                                     target_executable_path, target_executable_signer, requested_at, expires_at,
                                     decision_source, pam_rule_name, matched_policy_name, tool_name, risk_tier, action_digest, actuated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() - make_interval(mins => $10::int),
             CASE WHEN $11::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $11::float8 * 60) END,
             $12, $13, $14, $15, $16, $17, CASE WHEN $18 THEN now() END)
     RETURNING id`,
    [
      w.ids[s.org ?? org],
      w.ids[s.site ?? site],
      w.ids[device],
      s.flowType ?? 'uac_intercept',
      status,
      s.subjectUsername ?? 'CORP\\alice',
      s.subjectUserId ?? null,
      s.path ?? 'C:\\Program Files\\Tool\\setup.exe',
      s.signer ?? 'Tool Vendor Ltd',
      s.ageMinutes ?? 0,
      expiresIn,
      s.decisionSource ?? null,
      s.pamRuleName ?? null,
      s.matchedPolicyName ?? null,
      s.toolName ?? null,
      s.riskTier ?? null,
      s.actionDigest ?? null,
      s.actuated ?? status === 'actuating',
    ],
  );
  return row.id;
}

export async function storedRequest(id: string): Promise<Record<string, unknown>> {
  const [row] = await ownerQuery(`SELECT * FROM elevation_requests WHERE id = $1`, [id]);
  return row;
}

export async function eventsOf(id: string): Promise<{ type: string; from_status: string | null; to_status: string; actor_type: string; details: Record<string, unknown> }[]> {
  return ownerQuery(`SELECT type, from_status, to_status, actor_type, details FROM pam_elevation_events WHERE elevation_request_id = $1 ORDER BY created_at, id`, [id]);
}

export async function auditOf(id: string): Promise<{ action: string; actor_type: string; details: Record<string, unknown> }[]> {
  return ownerQuery(`SELECT action, actor_type, details FROM audit_logs WHERE resource_id = $1 ORDER BY created_at, id`, [id]);
}

export async function commandsOf(id: string): Promise<{ id: string; type: string; status: string; payload: Record<string, unknown>; error: string | null }[]> {
  return ownerQuery(`SELECT id, type, status, payload, error FROM device_commands WHERE elevation_request_id = $1 ORDER BY created_at, id`, [id]);
}

/** Moves a request's clock: requested_at and expires_at shifted into the past by `minutes`. */
export async function ageRequest(id: string, minutes: number): Promise<void> {
  await ownerQuery(
    `UPDATE elevation_requests SET requested_at = requested_at - make_interval(mins => $2), expires_at = expires_at - make_interval(mins => $2) WHERE id = $1`,
    [id, minutes],
  );
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export function respond(w: PamWorld, token: string, id: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post(`/api/v1/pam/elevation-requests/${id}/respond`).set(bearer(token)).send(body);
}

export function revoke(w: PamWorld, token: string, id: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post(`/api/v1/pam/elevation-requests/${id}/revoke`).set(bearer(token)).send(body);
}

export function list(w: PamWorld, token: string, query: Record<string, string | number> = {}) {
  return request(w.t.baseUrl).get('/api/v1/pam/elevation-requests').query(query).set(bearer(token));
}

/** Runs the approval fan-out of a request as agent ingest does: inside a transaction in the organization's scope. */
export async function fanOut(w: PamWorld, id: string, org = 'orgA'): Promise<{ approvals: number; pushes: number }> {
  return w.t.app.get(TenantTransactionService).run({ ...NO_SCOPE, scope: 'organization', orgIds: [w.ids[org]] }, () =>
    w.t.app.get(ApprovalFanoutService).fanOut({ id, orgId: w.ids[org] }),
  );
}

export function registerPhone(w: PamWorld, userKey: string, pushToken: string, platform: 'ios' | 'android' = 'ios') {
  return request(w.t.baseUrl).post('/api/v1/mobile-devices').set(bearer(w.plain[userKey])).send({ platform, pushToken });
}

export async function approvalsOf(id: string): Promise<{ id: string; approver_user_id: string; status: string }[]> {
  return ownerQuery(`SELECT id, approver_user_id, status FROM pam_approval_requests WHERE elevation_request_id = $1 ORDER BY approver_user_id`, [id]);
}

export function decide(w: PamWorld, token: string, approvalId: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post(`/api/v1/approvals/${approvalId}/decide`).set(bearer(token)).send(body);
}

/** Of the answers of a race, exactly one has the success `status` and every other one is 409. */
export function splitRace(results: request.Response[], status: number): { winner: request.Response; losers: request.Response[] } {
  const winners = results.filter((r) => r.status === status);
  const losers = results.filter((r) => r.status === 409);
  expect(winners).toHaveLength(1);
  expect(losers).toHaveLength(results.length - 1);
  return { winner: winners[0], losers };
}
