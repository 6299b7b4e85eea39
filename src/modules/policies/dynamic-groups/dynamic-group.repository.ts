import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { CustomFieldType } from '../../content/custom-fields/custom-field-value.util';

export interface DynamicGroupRow {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  filter: Record<string, unknown>;
  member_count: string;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT g.id, g.org_id, g.site_id, g.name, g.filter, g.created_at, g.updated_at,
                       (SELECT count(*) FROM device_group_members m WHERE m.org_id = g.org_id AND m.group_id = g.id) AS member_count
                  FROM device_groups g`;

@Injectable()
export class DynamicGroupRepository {
  constructor(private readonly db: DbService) {}

  /** `siteIds` null: every group; otherwise only groups bound to one of those sites. */
  list(orgId: string | undefined, siteIds: readonly string[] | null): Promise<DynamicGroupRow[]> {
    return this.db.rows<DynamicGroupRow>(
      `${SELECT} WHERE g.kind = 'dynamic' AND ($1::uuid IS NULL OR g.org_id = $1) AND ($2::uuid[] IS NULL OR g.site_id = ANY ($2))
        ORDER BY g.org_id, lower(g.name), g.id`,
      [orgId ?? null, siteIds],
    );
  }

  find(id: string): Promise<DynamicGroupRow | null> {
    return this.db.one<DynamicGroupRow>(`${SELECT} WHERE g.kind = 'dynamic' AND g.id = $1`, [id]);
  }

  /** Custom fields that apply to the organization: its own and its partner's partner-wide ones. */
  definitionsFor(orgId: string, ids: string[]): Promise<{ id: string; type: CustomFieldType; options: string[] }[]> {
    return this.db.rows(
      `SELECT d.id, d.type, d.options FROM custom_field_definitions d
        WHERE d.id = ANY ($2::uuid[]) AND (d.org_id = $1 OR d.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = $1))`,
      [orgId, ids],
    );
  }

  siteOrg(siteId: string): Promise<{ org_id: string } | null> {
    return this.db.one<{ org_id: string }>(`SELECT org_id FROM sites WHERE id = $1`, [siteId]);
  }

  async assignmentCount(id: string): Promise<number> {
    return Number((await this.db.one<{ n: string }>(`SELECT count(*) AS n FROM policy_assignments WHERE device_group_id = $1`, [id]))?.n ?? 0);
  }

  /** A page of members and their total; a page past the end counts again, as the device and contact lists do. */
  async members(orgId: string, groupId: string, siteIds: readonly string[] | null, limit: number, offset: number): Promise<{ rows: { device_id: string; hostname: string; site_id: string }[]; total: number }> {
    const rows = await this.db.rows<{ device_id: string; hostname: string; site_id: string; total: string }>(
      `SELECT d.id AS device_id, d.hostname, d.site_id, count(*) OVER () AS total
         FROM device_group_members m JOIN devices d ON d.org_id = m.org_id AND d.id = m.device_id
        WHERE m.org_id = $1 AND m.group_id = $2 AND ($3::uuid[] IS NULL OR d.site_id = ANY ($3))
        ORDER BY lower(d.hostname), d.id LIMIT $4 OFFSET $5`,
      [orgId, groupId, siteIds, limit, offset],
    );
    if (rows.length) return { rows: rows.map(({ total: _t, ...r }) => r), total: Number(rows[0].total) };
    if (offset <= 0) return { rows: [], total: 0 };
    // The window count has no row to ride on past the end.
    const counted = await this.db.one<{ n: string }>(
      `SELECT count(*) AS n
         FROM device_group_members m JOIN devices d ON d.org_id = m.org_id AND d.id = m.device_id
        WHERE m.org_id = $1 AND m.group_id = $2 AND ($3::uuid[] IS NULL OR d.site_id = ANY ($3))`,
      [orgId, groupId, siteIds],
    );
    return { rows: [], total: Number(counted?.n ?? 0) };
  }
}
