import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import type { DeviceCommandRow } from '../../pam/requests/device-command.service';

/** One poll, one call: app_agent_commands_take (migration 1763700951000), whose plan the server keeps. */
const TAKE_COMMANDS = prepared('agent_commands_take', `SELECT id, type, payload, status, elevation_request_id, created_at FROM app_agent_commands_take($1, $2, $3)`);

export type CommandRow = DeviceCommandRow;

/** Commands of one device, as its agent reads them (PAM writes them); the device always comes from the agent's token. */
@Injectable()
export class AgentCommandRepository {
  constructor(private readonly db: DbService) {}

  /**
   * One poll, one statement: first withdraws every queued actuation whose request was revoked,
   * expired or otherwise left actuating before the agent fetched it (it must never reach the
   * device), then hands out the remaining queued commands, oldest first, marking them delivered;
   * concurrent fetches never get the same one. The two updates touch disjoint rows (a withdrawn
   * command is excluded from the hand-out), as PostgreSQL requires of one statement.
   */
  take(orgId: string, deviceId: string, limit: number): Promise<CommandRow[]> {
    return this.db.rows<CommandRow>(TAKE_COMMANDS, [orgId, deviceId, limit]).then((rows) =>
      rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id)),
    );
  }

  find(orgId: string, deviceId: string, id: string): Promise<CommandRow | null> {
    return this.db.one<CommandRow>(
      `SELECT id, type, payload, status, elevation_request_id, created_at FROM device_commands WHERE org_id = $1 AND device_id = $2 AND id = $3`,
      [orgId, deviceId, id],
    );
  }
}
