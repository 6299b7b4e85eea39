import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface DeviceGroupRow {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  device_ids: string[];
  created_at: Date;
  updated_at: Date;
}

// Members limited to the sites in $1 (NULL: all), so a restricted caller never learns other sites' devices.
const SELECT_GROUP = `
  SELECT g.*, array(
           SELECT m.device_id::text FROM device_group_members m
             JOIN devices d ON d.org_id = m.org_id AND d.id = m.device_id
            WHERE m.org_id = g.org_id AND m.group_id = g.id AND ($1::uuid[] IS NULL OR d.site_id = ANY($1::uuid[]))
            ORDER BY m.device_id) AS device_ids
    FROM device_groups g`;

@Injectable()
export class DeviceGroupRepository {
  constructor(private readonly db: Db) {}

  /** `siteIds` null: every group; otherwise only groups bound to one of those sites. */
  list(f: { orgId?: string; siteId?: string; siteIds: readonly string[] | null }): Promise<DeviceGroupRow[]> {
    return this.db.rows<DeviceGroupRow>(
      `${SELECT_GROUP}
        WHERE ($1::uuid[] IS NULL OR g.site_id = ANY($1::uuid[])) AND ($2::uuid IS NULL OR g.org_id = $2) AND ($3::uuid IS NULL OR g.site_id = $3)
        ORDER BY g.org_id, g.name, g.id`,
      [f.siteIds, f.orgId ?? null, f.siteId ?? null],
    );
  }

  find(id: string, siteIds: readonly string[] | null): Promise<DeviceGroupRow | null> {
    return this.db.one<DeviceGroupRow>(`${SELECT_GROUP} WHERE g.id = $2`, [siteIds, id]);
  }

  insert(g: { orgId: string; siteId: string | null; name: string }): Promise<{ id: string } | null> {
    return this.db.one<{ id: string }>(`INSERT INTO device_groups (org_id, site_id, name) VALUES ($1, $2, $3) RETURNING id`, [g.orgId, g.siteId, g.name]);
  }

  /** `siteId` undefined keeps the site; null makes the group organization-wide. */
  update(id: string, patch: { name?: string; siteId?: string | null }): Promise<number> {
    return this.db.exec(
      `UPDATE device_groups SET name = coalesce($2, name), site_id = CASE WHEN $3 THEN $4::uuid ELSE site_id END, updated_at = now() WHERE id = $1`,
      [id, patch.name ?? null, patch.siteId !== undefined, patch.siteId ?? null],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM device_groups WHERE id = $1`, [id]);
  }

  devicesInOrg(orgId: string, deviceIds: readonly string[]): Promise<{ id: string; site_id: string }[]> {
    return this.db.rows(`SELECT id, site_id FROM devices WHERE org_id = $1 AND id = ANY($2::uuid[])`, [orgId, deviceIds]);
  }

  async addMembers(orgId: string, groupId: string, deviceIds: readonly string[]): Promise<number> {
    return this.db.exec(
      `INSERT INTO device_group_members (org_id, group_id, device_id) SELECT $1, $2, unnest($3::uuid[]) ON CONFLICT DO NOTHING`,
      [orgId, groupId, deviceIds],
    );
  }

  removeMember(orgId: string, groupId: string, deviceId: string): Promise<number> {
    return this.db.exec(`DELETE FROM device_group_members WHERE org_id = $1 AND group_id = $2 AND device_id = $3`, [orgId, groupId, deviceId]);
  }
}
