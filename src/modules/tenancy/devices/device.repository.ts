import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface DeviceRow {
  id: string;
  org_id: string;
  site_id: string;
  hostname: string;
  os_type: string | null;
  status: string;
  agent_id: string | null;
  enrolled_at: Date | null;
  last_seen_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeviceFilter {
  orgId?: string;
  siteId?: string;
  status?: string;
  search?: string;
  /** null: every site. */
  siteIds: readonly string[] | null;
}

const SELECT_DEVICE = `
  SELECT d.*, a.id AS agent_id, a.created_at AS enrolled_at, a.last_seen_at
    FROM devices d
    LEFT JOIN agents a ON a.org_id = d.org_id AND a.device_id = d.id AND a.revoked_at IS NULL`;

const FILTER = `
  ($1::uuid[] IS NULL OR d.site_id = ANY($1::uuid[])) AND ($2::uuid IS NULL OR d.org_id = $2)
  AND ($3::uuid IS NULL OR d.site_id = $3) AND ($4::text IS NULL OR d.status = $4)
  AND ($5::text IS NULL OR d.hostname ILIKE '%' || $5 || '%')`;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');

@Injectable()
export class DeviceRepository {
  constructor(private readonly db: Db) {}

  async list(f: DeviceFilter, page: { limit: number; offset: number }): Promise<{ rows: DeviceRow[]; total: number }> {
    const params = [f.siteIds, f.orgId ?? null, f.siteId ?? null, f.status ?? null, f.search === undefined ? null : likeEscape(f.search)];
    const [count] = await this.db.rows<{ total: string }>(`SELECT count(*) AS total FROM devices d WHERE ${FILTER}`, params);
    const rows = await this.db.rows<DeviceRow>(`${SELECT_DEVICE} WHERE ${FILTER} ORDER BY d.org_id, lower(d.hostname), d.id LIMIT $6 OFFSET $7`, [
      ...params,
      page.limit,
      page.offset,
    ]);
    return { rows, total: Number(count.total) };
  }

  find(id: string): Promise<DeviceRow | null> {
    return this.db.one<DeviceRow>(`${SELECT_DEVICE} WHERE d.id = $1`, [id]);
  }

  /** Locks the device row so concurrent enrollments of one device run one after the other. */
  lock(id: string): Promise<{ id: string; org_id: string; site_id: string; status: string } | null> {
    return this.db.one(`SELECT id, org_id, site_id, status FROM devices WHERE id = $1 FOR UPDATE`, [id]);
  }

  insert(d: { orgId: string; siteId: string; hostname: string; osType: string | null }): Promise<{ id: string } | null> {
    return this.db.one<{ id: string }>(`INSERT INTO devices (org_id, site_id, hostname, os_type) VALUES ($1, $2, $3, $4) RETURNING id`, [
      d.orgId,
      d.siteId,
      d.hostname,
      d.osType,
    ]);
  }

  /** `osType` undefined keeps it; null clears it. */
  update(id: string, patch: { hostname?: string; siteId?: string; status?: string; osType?: string | null }): Promise<number> {
    return this.db.exec(
      `UPDATE devices SET hostname = coalesce($2, hostname), site_id = coalesce($3, site_id), status = coalesce($4, status),
              os_type = CASE WHEN $5 THEN $6 ELSE os_type END, updated_at = now()
        WHERE id = $1`,
      [id, patch.hostname ?? null, patch.siteId ?? null, patch.status ?? null, patch.osType !== undefined, patch.osType ?? null],
    );
  }

  revokeAgents(orgId: string, deviceId: string): Promise<number> {
    return this.db.exec(`UPDATE agents SET revoked_at = now() WHERE org_id = $1 AND device_id = $2 AND revoked_at IS NULL`, [orgId, deviceId]);
  }

  insertAgent(a: { id: string; orgId: string; deviceId: string; tokenHash: string }): Promise<number> {
    return this.db.exec(`INSERT INTO agents (id, org_id, device_id, token_hash) VALUES ($1, $2, $3, $4)`, [a.id, a.orgId, a.deviceId, a.tokenHash]);
  }
}
