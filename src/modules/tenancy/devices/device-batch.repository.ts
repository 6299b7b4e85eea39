import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

/** A device as the importer's batches read and write it, by column name (jsonb_to_recordset). */
export interface DeviceRecord {
  id: string;
  org_id: string;
  hostname: string;
  os_type: string | null;
  site_id: string;
  status: string;
}

/**
 * Devices written in bulk (the importer), through DeviceService, in the caller's transaction:
 * one statement per kind of change for a whole batch (jsonb_to_recordset), so tens of thousands
 * of rows cost a handful of round trips.
 */
@Injectable()
export class DeviceBatchRepository {
  constructor(private readonly db: DbService) {}

  ofOrgs(orgIds: string[]): Promise<DeviceRecord[]> {
    return this.db.rows<DeviceRecord>(`SELECT id, org_id, hostname, os_type, site_id, status FROM devices WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  async insertMany(rows: DeviceRecord[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO devices (id, org_id, site_id, hostname, os_type, status)
       SELECT x.id, x.org_id, x.site_id, x.hostname, x.os_type, x.status
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, hostname text, os_type text, status text)`,
      [JSON.stringify(rows)],
    );
  }

  async updateMany(rows: DeviceRecord[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `UPDATE devices d SET site_id = x.site_id, hostname = x.hostname, os_type = x.os_type, status = x.status, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, hostname text, os_type text, status text)
        WHERE d.org_id = x.org_id AND d.id = x.id`,
      [JSON.stringify(rows)],
    );
  }
}
