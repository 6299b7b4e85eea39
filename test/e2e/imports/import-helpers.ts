import request from 'supertest';
import { ownerQuery, TestApp } from '../../support/test-app';

export interface ImportBody {
  id: string;
  status: string;
  percent: number;
  phase: string | null;
  counts: Record<string, number>;
  pendingMatches: number;
  error: unknown;
  report: Record<string, unknown> & {
    summary: Record<string, number>;
    created: ReportItem[];
    updated: ReportItem[];
    unchanged: ReportItem[];
    heldBack: ReportItem[];
    unresolved: ReportItem[];
    conflicts: { kind: string; name: string; winner: string; overridden: string[]; fields: string[] }[];
    phases: { name: string; status: string; counts: Record<string, number> }[];
  };
}

export interface ReportItem {
  kind: string;
  ref: string;
  externalId?: string;
  name?: string;
  reason?: string;
  fields?: string[];
  candidateContactId?: string;
  mergedFrom?: string[];
}

/** Polls GET /imports/:id until the job ends. */
export async function waitForImport(t: TestApp, auth: string, id: string, timeoutMs = 60_000): Promise<ImportBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(t.http).get(`/api/v1/imports/${id}`).set('Authorization', auth).expect(200);
    if (res.body.import.status === 'completed' || res.body.import.status === 'failed') return res.body.import;
    if (Date.now() > deadline) throw new Error(`import ${id} still ${res.body.import.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Posts a document or CSV and waits for the job; returns the finished import. */
export async function runImport(
  t: TestApp,
  auth: string,
  body: object | string,
  query: Record<string, string | boolean> = {},
  contentType = typeof body === 'string' ? 'text/csv' : 'application/json',
): Promise<ImportBody> {
  const res = await request(t.http).post('/api/v1/imports').query(query).set('Authorization', auth).set('Content-Type', contentType).send(body);
  if (res.status !== 202) throw new Error(`POST /imports answered ${res.status}: ${JSON.stringify(res.body)}`);
  return waitForImport(t, auth, res.body.import.id);
}

export const find = (items: ReportItem[], ref: string) => items.find((i) => i.ref === ref);

/**
 * A digest of everything an import can write for the partner (rows with their updated_at),
 * so "changed nothing" is checked on the stored data rather than on the report.
 */
export async function partnerDigest(partnerId: string): Promise<Record<string, string>> {
  const orgs = `(SELECT id FROM organizations WHERE partner_id = $1)`;
  const [row] = await ownerQuery<Record<string, string>>(
    `SELECT
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM organizations x WHERE x.partner_id = $1) AS organizations,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM sites x WHERE x.org_id IN ${orgs}) AS sites,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM devices x WHERE x.org_id IN ${orgs}) AS devices,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM contacts x WHERE x.org_id IN ${orgs}) AS contacts,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.device_id, x.definition_id), '')) FROM custom_field_values x WHERE x.org_id IN ${orgs}) AS values,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM custom_field_definitions x WHERE x.partner_id = $1 OR x.org_id IN ${orgs}) AS definitions,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM scripts x WHERE x.partner_id = $1 OR x.org_id IN ${orgs}) AS scripts,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM policies x WHERE x.partner_id = $1 OR x.org_id IN ${orgs}) AS policies,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM policy_assignments x WHERE x.partner_id = $1) AS assignments,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.id), '')) FROM device_groups x WHERE x.org_id IN ${orgs}) AS groups,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.group_id, x.device_id), '')) FROM device_group_members x WHERE x.org_id IN ${orgs}) AS members,
       (SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x.kind, x.external_id, x.local_id), '')) FROM import_links x WHERE x.partner_id = $1) AS links`,
    [partnerId],
  );
  return row;
}
