import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

export interface DeviceCommandRow {
  id: string;
  type: 'actuate_elevation' | 'revoke_elevation';
  payload: Record<string, unknown>;
  status: string;
  elevation_request_id: string | null;
  created_at: Date;
}

/** The results agents report for the commands PAM queued for their devices. */
@Injectable()
export class DeviceCommandRepository {
  constructor(private readonly db: DbService) {}

  /** Records the result once: only a queued or delivered command takes one. */
  complete(orgId: string, deviceId: string, id: string, status: 'completed' | 'failed', error: string | null): Promise<DeviceCommandRow | null> {
    return this.db.one<DeviceCommandRow>(
      `UPDATE device_commands SET status = $4, error = $5, completed_at = now()
        WHERE org_id = $1 AND device_id = $2 AND id = $3 AND status IN ('queued', 'delivered')
        RETURNING id, type, payload, status, elevation_request_id, created_at`,
      [orgId, deviceId, id, status, error],
    );
  }
}
