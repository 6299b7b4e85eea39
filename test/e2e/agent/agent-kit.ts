import { createHash } from 'node:crypto';
import request from 'supertest';
import type { Fixture } from '../../../src/seed/fixture.types';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, TestApp } from '../../support/test-app';

export type DeviceKey = 'deviceA1' | 'deviceA2' | 'deviceB1';

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A well-formed ingest body; override any field. */
export function prompt(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    subject_username: 'CORP\\alice',
    target_executable_path: 'C:\\Program Files\\Contoso\\setup.exe',
    target_executable_hash: sha256('setup.exe'),
    target_executable_signer: 'Contoso Ltd',
    pid: 4242,
    parent_image: 'C:\\Windows\\explorer.exe',
    command_line: '"C:\\Program Files\\Contoso\\setup.exe" /quiet',
    observed_at: new Date().toISOString(),
    ...fields,
  };
}

export interface RuleFields {
  name?: string;
  verdict: 'auto_approve' | 'auto_deny' | 'require_approval' | 'ignore';
  priority?: number;
  enabled?: boolean;
  site_id?: string | null;
  match_path_glob?: string | null;
  match_signer?: string | null;
  match_hash?: string | null;
  match_user?: string | null;
  match_tool_name?: string | null;
  match_risk_tier?: number | null;
  time_window?: object | null;
  approval_duration_minutes?: number | null;
  created_at?: string;
  id?: string;
}

/**
 * Seeds a tenant fixture and drives agent routes. Rules and the organization PAM config are
 * written as the owner (with the rules version bumped the way the rules API does), so these
 * tests depend only on the schema; software and pam policies go through the policies API.
 */
export class AgentKit {
  fx!: Fixture;
  ids!: Record<string, string>;
  admin: Record<string, string> = {};

  constructor(readonly t: TestApp) {}

  async seed(extend: (fx: Fixture & { emails: Record<string, string> }) => Fixture = (f) => f): Promise<this> {
    this.fx = extend(tenantFixture());
    this.ids = await this.t.seed(this.fx);
    for (const who of ['adminA', 'adminB', 'tech']) this.admin[who] = `Bearer ${await this.t.token(this.ids[who], { mfa: true })}`;
    return this;
  }

  agent(key: string): { id: string; token: string } {
    const d = this.fx.devices!.find((x) => x.key === key)!;
    return { id: d.agentId!, token: d.agentToken! };
  }

  ingest(key: string, body: unknown = prompt(), opts: { token?: string; path?: string } = {}) {
    const a = this.agent(key);
    return request(this.t.http)
      .post(`/api/v1/agents/${opts.path ?? a.id}/elevation-requests`)
      .set('Authorization', `Bearer ${opts.token ?? a.token}`)
      .send(body as object);
  }

  settings(key: string) {
    const a = this.agent(key);
    return request(this.t.http).get(`/api/v1/agents/${a.id}/pam-settings`).set('Authorization', `Bearer ${a.token}`);
  }

  async rule(org: string, f: RuleFields): Promise<string> {
    const cols = Object.keys(f).filter((k) => (f as unknown as Record<string, unknown>)[k] !== undefined);
    const values = cols.map((k) => {
      const v = (f as unknown as Record<string, unknown>)[k];
      return v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
    });
    const [row] = await ownerQuery<{ id: string }>(
      `INSERT INTO pam_rules (org_id, name, ${cols.filter((c) => c !== 'name').join(', ')})
       VALUES ($1, $2${cols.filter((c) => c !== 'name').map((_, i) => `, $${i + 3}`).join('')}) RETURNING id`,
      [this.ids[org], f.name ?? `rule ${Math.random().toString(36).slice(2, 8)}`, ...values.filter((_, i) => cols[i] !== 'name')],
    );
    await this.bumpRules(org);
    return row.id;
  }

  async bumpRules(org: string): Promise<void> {
    await ownerQuery(
      `INSERT INTO pam_rules_versions (org_id, version) VALUES ($1, 1) ON CONFLICT (org_id) DO UPDATE SET version = pam_rules_versions.version + 1`,
      [this.ids[org]],
    );
  }

  async clearRules(org: string): Promise<void> {
    await ownerQuery(`DELETE FROM pam_rules WHERE org_id = $1`, [this.ids[org]]);
    await this.bumpRules(org);
  }

  async orgConfig(org: string, verdict: 'require_approval' | 'auto_deny', minutes = 15): Promise<void> {
    await ownerQuery(
      `INSERT INTO pam_org_config (org_id, default_unmatched_verdict, default_approval_duration_minutes) VALUES ($1, $2, $3)
       ON CONFLICT (org_id) DO UPDATE SET default_unmatched_verdict = $2, default_approval_duration_minutes = $3`,
      [this.ids[org], verdict, minutes],
    );
  }

  /** A configuration policy created and assigned through the policies API; returns its id. */
  async policy(who: string, body: object, targets: { targetType: string; targetId: string; priority?: number }[]): Promise<string> {
    const res = await request(this.t.http).post('/api/v1/policies').set('Authorization', this.admin[who]).send({ type: 'configuration', ...body });
    if (res.status !== 201) throw new Error(`policy create: ${res.status} ${JSON.stringify(res.body)}`);
    for (const target of targets) {
      const a = await request(this.t.http).post(`/api/v1/policies/${res.body.policy.id}/assignments`).set('Authorization', this.admin[who]).send(target);
      if (a.status !== 201) throw new Error(`policy assign: ${a.status} ${JSON.stringify(a.body)}`);
    }
    return res.body.policy.id;
  }

  async deletePolicy(who: string, id: string): Promise<void> {
    await request(this.t.http).delete(`/api/v1/policies/${id}`).set('Authorization', this.admin[who]).expect(200);
  }

  async request(id: string): Promise<Record<string, unknown>> {
    const [row] = await ownerQuery(`SELECT * FROM elevation_requests WHERE id = $1`, [id]);
    return row;
  }
}
