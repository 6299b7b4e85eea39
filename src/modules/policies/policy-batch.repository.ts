import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import type { PolicyType } from './features/policy-feature.types';

/** A policy as the importer compares and writes it (column names). */
export interface PolicyRecord {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  type: PolicyType;
  name: string;
  description: string | null;
  enabled: boolean;
  features: Record<string, unknown>;
}

export interface AssignmentTarget {
  id: string;
  policy_id: string;
  target_level: string;
  /** The id of the assigned site, device group, device, organization or partner. */
  target_id: string;
  priority: number;
}

/** An assignment as the importer writes it (column names). */
export interface AssignmentRecord {
  partner_id: string;
  org_id: string | null;
  policy_id: string;
  target_level: string;
  site_id: string | null;
  device_group_id: string | null;
  device_id: string | null;
  priority: number;
}

/**
 * Policies and their assignments written in bulk (the importer), through PolicyService, in the
 * caller's transaction: one statement per kind of change for a whole batch (jsonb_to_recordset).
 */
@Injectable()
export class PolicyBatchRepository {
  constructor(private readonly db: DbService) {}

  /** The partner's own policies and those of these organizations. */
  ofOwners(partnerId: string, orgIds: string[]): Promise<PolicyRecord[]> {
    return this.db.rows<PolicyRecord>(`SELECT id, partner_id, org_id, type, name, description, enabled, features FROM policies WHERE partner_id = $1 OR org_id = ANY ($2::uuid[])`, [partnerId, orgIds]);
  }

  /** Inserts the policy, or (insert false) updates the one of that id, owner and type. */
  async save(p: PolicyRecord, insert: boolean): Promise<void> {
    const params = [p.id, p.partner_id, p.org_id, p.type, p.name, p.description, p.enabled, JSON.stringify(p.features)];
    await this.db.exec(
      insert
        ? `INSERT INTO policies (id, partner_id, org_id, type, name, description, enabled, features) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`
        : `UPDATE policies SET name = $5, description = $6, enabled = $7, features = $8::jsonb, updated_at = now()
            WHERE id = $1 AND partner_id IS NOT DISTINCT FROM $2 AND org_id IS NOT DISTINCT FROM $3 AND type = $4`,
      params,
    );
  }

  assignments(policyIds: string[]): Promise<AssignmentTarget[]> {
    return this.db.rows<AssignmentTarget>(
      `SELECT id, policy_id, target_level, coalesce(site_id, device_group_id, device_id, org_id, partner_id) AS target_id, priority
         FROM policy_assignments WHERE policy_id = ANY ($1::uuid[])`,
      [policyIds],
    );
  }

  async insertAssignments(rows: AssignmentRecord[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, site_id, device_group_id, device_id, priority)
       SELECT x.partner_id, x.org_id, x.policy_id, x.target_level, x.site_id, x.device_group_id, x.device_id, x.priority
         FROM jsonb_to_recordset($1::jsonb) AS x(partner_id uuid, org_id uuid, policy_id uuid, target_level text, site_id uuid, device_group_id uuid, device_id uuid, priority int)`,
      [JSON.stringify(rows)],
    );
  }

  async updatePriorities(rows: { id: string; priority: number }[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(`UPDATE policy_assignments a SET priority = x.priority FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, priority int) WHERE a.id = x.id`, [JSON.stringify(rows)]);
  }
}
