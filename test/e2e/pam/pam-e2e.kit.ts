import request from 'supertest';
import type { Response } from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';

export type Caller = ReturnType<typeof callerFor>;

function callerFor(t: TestApp, bearer: string) {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${bearer}`);
  return {
    get: (path: string) => auth(request(t.http).get(`/api/v1${path}`)),
    post: (path: string, body?: object) => auth(request(t.http).post(`/api/v1${path}`)).send(body ?? {}),
    put: (path: string, body?: object) => auth(request(t.http).put(`/api/v1${path}`)).send(body ?? {}),
    patch: (path: string, body?: object) => auth(request(t.http).patch(`/api/v1${path}`)).send(body ?? {}),
    delete: (path: string) => auth(request(t.http).delete(`/api/v1${path}`)),
  };
}

/** The error body of docs/api-conventions.md with the expected status and code. */
export function expectError(res: Response, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.body).toEqual(expect.objectContaining({ success: false, statusCode: status, code, error: expect.any(String), requestId: expect.any(String) }));
}

export interface PamWorld {
  t: TestApp;
  ids: Record<string, string>;
  as: Record<'adminA' | 'adminANoMfa' | 'readerA' | 'siteA1' | 'adminB' | 'tech' | 'techA', Caller>;
  close(): Promise<void>;
}

/** The standard tenant fixture (unique names) with a session per user; MFA satisfied unless the name says otherwise. */
export async function startPamWorld(env: Record<string, string> = {}): Promise<PamWorld> {
  const t = await startTestApp(env);
  const ids = await t.seed(tenantFixture());
  const as = async (userId: string, mfa = true) => callerFor(t, await t.token(userId, { mfa }));
  return {
    t,
    ids,
    as: {
      adminA: await as(ids.adminA),
      adminANoMfa: await as(ids.adminA, false),
      readerA: await as(ids.readerA),
      siteA1: await as(ids.siteA1User),
      adminB: await as(ids.adminB),
      tech: await as(ids.tech),
      techA: await as(ids.techA),
    },
    close: () => t.close(),
  };
}

export async function rulesVersion(orgId: string): Promise<number> {
  const [row] = await ownerQuery<{ version: string }>(`SELECT version FROM pam_rules_versions WHERE org_id = $1`, [orgId]);
  return row ? Number(row.version) : 0;
}

export interface RequestRow {
  flowType?: string;
  status?: string;
  siteKey?: 'A1' | 'A2';
  user?: string | null;
  path?: string | null;
  signer?: string | null;
  hash?: string | null;
  parentImage?: string | null;
  commandLine?: string | null;
  toolName?: string | null;
  riskTier?: number | null;
  /** Hours before now (default 1), unless `at` is given. */
  hoursAgo?: number;
  at?: Date;
}

/**
 * Inserts elevation requests as the owner: of organization A (sites A1 and A2) by default,
 * or of organization B (site B1).
 */
export async function insertRequests(w: PamWorld, rows: RequestRow[], org: 'A' | 'B' = 'A'): Promise<string[]> {
  const params: unknown[] = [];
  const tuples = rows.map((r) => {
    const a2 = r.siteKey === 'A2';
    const values = [
      org === 'B' ? w.ids.orgB : w.ids.orgA,
      org === 'B' ? w.ids.siteB1 : a2 ? w.ids.siteA2 : w.ids.siteA1,
      org === 'B' ? w.ids.deviceB1 : a2 ? w.ids.deviceA2 : w.ids.deviceA1,
      r.flowType ?? 'uac_intercept',
      r.status ?? 'pending',
      r.user ?? null,
      r.path ?? null,
      r.signer ?? null,
      r.hash ?? null,
      r.parentImage ?? null,
      r.commandLine ?? null,
      r.toolName ?? null,
      r.riskTier ?? null,
      r.hoursAgo ?? 1,
      r.at ?? null,
    ];
    const p = values.map((value) => `$${params.push(value)}`);
    return `(${p.slice(0, 12).join(', ')}, ${p[12]}::smallint, coalesce(${p[14]}::timestamptz, now() - make_interval(secs => ${p[13]}::float8 * 3600)))`;
  });
  const inserted = await ownerQuery<{ id: string }>(
    `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, target_executable_path,
       target_executable_signer, target_executable_hash, parent_image, command_line, tool_name, risk_tier, requested_at)
     VALUES ${tuples.join(', ')} RETURNING id`,
    params,
  );
  return inserted.map((row) => row.id);
}
