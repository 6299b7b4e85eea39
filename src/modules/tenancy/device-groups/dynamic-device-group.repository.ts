import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface DynamicGroupRecord {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  kind: string;
  filter: Record<string, unknown> | null;
}

export interface DynamicGroupWrite {
  siteId: string | null;
  name: string;
  filter: object;
}

/**
 * The writes of dynamic device groups (kind 'dynamic', members computed from their filter by a
 * trigger), for the policies module's dynamic groups and the importer. Device groups belong to
 * tenancy, which alone writes them.
 */
@Injectable()
export class DynamicDeviceGroupRepository {
  constructor(private readonly db: Db) {}

  /** Every group (static and dynamic) of these organizations. */
  ofOrgs(orgIds: string[]): Promise<DynamicGroupRecord[]> {
    return this.db.rows(`SELECT id, org_id, site_id, name, kind, filter FROM device_groups WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  /** Inserting the row runs the membership recompute trigger in the same transaction. */
  insert(id: string, orgId: string, g: DynamicGroupWrite): Promise<{ id: string } | null> {
    return this.db.one<{ id: string }>(`INSERT INTO device_groups (id, org_id, site_id, name, kind, filter) VALUES ($1, $2, $3, $4, 'dynamic', $5::jsonb) RETURNING id`, [
      id,
      orgId,
      g.siteId,
      g.name,
      JSON.stringify(g.filter),
    ]);
  }

  update(id: string, g: DynamicGroupWrite): Promise<number> {
    return this.db.exec(`UPDATE device_groups SET site_id = $2, name = $3, filter = $4::jsonb, updated_at = now() WHERE id = $1 AND kind = 'dynamic'`, [
      id,
      g.siteId,
      g.name,
      JSON.stringify(g.filter),
    ]);
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM device_groups WHERE id = $1 AND kind = 'dynamic'`, [id]);
  }
}
