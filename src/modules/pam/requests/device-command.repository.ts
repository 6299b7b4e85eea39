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

  /** Records the result once: only a queued or delivered command takes one. A result is also its acknowledgement. */
  complete(orgId: string, deviceId: string, id: string, status: 'completed' | 'failed', error: string | null): Promise<DeviceCommandRow | null> {
    return this.db.one<DeviceCommandRow>(
      `UPDATE device_commands SET status = $4, error = $5, completed_at = now(), acknowledged_at = coalesce(acknowledged_at, now())
        WHERE org_id = $1 AND device_id = $2 AND id = $3 AND status IN ('queued', 'delivered')
        RETURNING id, type, payload, status, elevation_request_id, created_at`,
      [orgId, deviceId, id, status, error],
    );
  }

  /**
   * The agent has the command: it is not handed out again. Idempotent; the command's state after the
   * call (null: unknown to this device).
   */
  acknowledge(orgId: string, deviceId: string, id: string): Promise<{ status: string } | null> {
    return this.db.one<{ status: string }>(
      `WITH acked AS (
         UPDATE device_commands SET acknowledged_at = now()
          WHERE org_id = $1 AND device_id = $2 AND id = $3 AND status = 'delivered' AND acknowledged_at IS NULL
          RETURNING status)
       SELECT status FROM acked UNION ALL SELECT status FROM device_commands WHERE org_id = $1 AND device_id = $2 AND id = $3 LIMIT 1`,
      [orgId, deviceId, id],
    );
  }
}
