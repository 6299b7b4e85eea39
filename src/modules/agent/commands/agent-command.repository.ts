import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { DeviceCommandRow } from '../../pam/requests/device-command.service';

/**
 * Commands of one device, as its agent looks one up (PAM writes them, and hands them out through
 * DeviceCommandService); the device always comes from the agent's token.
 */
@Injectable()
export class AgentCommandRepository {
  constructor(private readonly db: DbService) {}

  find(orgId: string, deviceId: string, id: string): Promise<DeviceCommandRow | null> {
    return this.db.one<DeviceCommandRow>(
      `SELECT id, type, payload, status, elevation_request_id, created_at FROM device_commands WHERE org_id = $1 AND device_id = $2 AND id = $3`,
      [orgId, deviceId, id],
    );
  }
}
