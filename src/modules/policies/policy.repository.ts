import { Injectable } from '@nestjs/common';
import { Db } from '../../infra/database/db.service';
import type { PolicyType } from './features/policy-feature.types';
import type { TargetType } from './policy.dto';

export interface PolicyRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  type: PolicyType;
  name: string;
  description: string | null;
  enabled: boolean;
  features: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface AssignmentRow {
  id: string;
  partner_id: string;
  org_id: string | null;
  policy_id: string;
  target_level: TargetType;
  site_id: string | null;
  device_group_id: string | null;
  device_id: string | null;
  priority: number;
  created_at: Date;
}

export interface AssignmentWrite {
  partnerId: string;
  orgId: string | null;
  policyId: string;
  level: TargetType;
  siteId: string | null;
  groupId: string | null;
  deviceId: string | null;
  priority: number;
}

@Injectable()
export class PolicyRepository {
  constructor(private readonly db: Db) {}

  list(f: { orgId?: string; type?: string; scope?: string }): Promise<PolicyRow[]> {
    return this.db.rows<PolicyRow>(
      `SELECT * FROM policies p
        WHERE ($1::uuid IS NULL OR p.org_id = $1 OR p.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = $1))
          AND ($2::text IS NULL OR p.type = $2)
          AND ($3::text IS NULL OR ($3 = 'partner') = (p.partner_id IS NOT NULL))
        ORDER BY p.type, lower(p.name), p.org_id NULLS FIRST, p.id`,
      [f.orgId ?? null, f.type ?? null, f.scope ?? null],
    );
  }

  find(id: string): Promise<PolicyRow | null> {
    return this.db.one<PolicyRow>(`SELECT * FROM policies WHERE id = $1`, [id]);
  }

  insert(p: { partnerId: string | null; orgId: string | null; type: PolicyType; name: string; description: string | null; enabled: boolean; features: object }): Promise<PolicyRow | null> {
    return this.db.one<PolicyRow>(
      `INSERT INTO policies (partner_id, org_id, type, name, description, enabled, features) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING *`,
      [p.partnerId, p.orgId, p.type, p.name, p.description, p.enabled, JSON.stringify(p.features)],
    );
  }

  update(id: string, p: { name: string; description: string | null; enabled: boolean; features: object }): Promise<PolicyRow | null> {
    return this.db.one<PolicyRow>(
      `UPDATE policies SET name = $2, description = $3, enabled = $4, features = $5::jsonb, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, p.name, p.description, p.enabled, JSON.stringify(p.features)],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM policies WHERE id = $1`, [id]);
  }

  assignments(policyId: string): Promise<AssignmentRow[]> {
    return this.db.rows<AssignmentRow>(
      `SELECT * FROM policy_assignments WHERE policy_id = $1
        ORDER BY array_position(ARRAY['partner', 'organization', 'site', 'device_group', 'device']::varchar[], target_level), priority, created_at, id`,
      [policyId],
    );
  }

  findAssignment(policyId: string, id: string): Promise<AssignmentRow | null> {
    return this.db.one<AssignmentRow>(`SELECT * FROM policy_assignments WHERE policy_id = $1 AND id = $2`, [policyId, id]);
  }

  insertAssignment(a: AssignmentWrite): Promise<AssignmentRow | null> {
    return this.db.one<AssignmentRow>(
      `INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, site_id, device_group_id, device_id, priority)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [a.partnerId, a.orgId, a.policyId, a.level, a.siteId, a.groupId, a.deviceId, a.priority],
    );
  }

  deleteAssignment(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM policy_assignments WHERE id = $1`, [id]);
  }

  /** The organization (and its partner) of a target the caller can see; null when invisible. */
  targetOrg(level: 'organization' | 'site' | 'device_group' | 'device', id: string): Promise<{ org_id: string; partner_id: string; site_id: string | null } | null> {
    const sql = {
      organization: `SELECT o.id AS org_id, o.partner_id, NULL::uuid AS site_id FROM organizations o WHERE o.id = $1`,
      site: `SELECT s.org_id, o.partner_id, s.id AS site_id FROM sites s JOIN organizations o ON o.id = s.org_id WHERE s.id = $1`,
      device_group: `SELECT g.org_id, o.partner_id, g.site_id FROM device_groups g JOIN organizations o ON o.id = g.org_id WHERE g.id = $1`,
      device: `SELECT d.org_id, o.partner_id, d.site_id FROM devices d JOIN organizations o ON o.id = d.org_id WHERE d.id = $1`,
    }[level];
    return this.db.one(sql, [id]);
  }
}
