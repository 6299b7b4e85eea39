import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import type { DeviceCommandRow } from '../../pam/requests/device-command.service';

/** One poll, one call: app_agent_commands_take (migrations 1763700951000, 1763702200000), whose plan the server keeps. */
const TAKE_COMMANDS = prepared(
  'agent_commands_take_v2',
  `SELECT id, type, payload, status, elevation_request_id, created_at, delivery_count, redeliver_in_ms FROM app_agent_commands_take($1, $2, $3, $4, make_interval(secs => $5))`,
);

export type CommandRow = DeviceCommandRow & { delivery_count: number };

/** What a read of the queue hands out, and (nothing handed out) in how long an unacknowledged delivery is due again. */
export interface Take {
  commands: CommandRow[];
  redeliverInMs: number | null;
}

/** Commands of one device, as its agent reads them (PAM writes them); the device always comes from the agent's token. */
@Injectable()
export class AgentCommandRepository {
  constructor(private readonly db: DbService) {}

  /**
   * One poll, one statement: first withdraws every actuation not yet acknowledged whose request was
   * revoked, expired or otherwise left actuating (it must never reach the device), then hands out
   * the queued commands and those delivered at least `redeliverSeconds` ago and still not
   * acknowledged, oldest first, marking them delivered; concurrent fetches never get the same one.
   * Nothing for an agent whose token was revoked since its request began. The two updates touch
   * disjoint rows (a withdrawn command is excluded from the hand-out), as PostgreSQL requires.
   */
  async take(orgId: string, deviceId: string, agentId: string, limit: number, redeliverSeconds: number): Promise<Take> {
    const rows = await this.db.rows<CommandRow & { redeliver_in_ms: number | null }>(TAKE_COMMANDS, [orgId, deviceId, agentId, limit, redeliverSeconds]);
    const marker = rows.find((r) => r.id === null);
    const commands = rows.filter((r) => r.id !== null).sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
    return { commands, redeliverInMs: marker?.redeliver_in_ms ?? null };
  }

  find(orgId: string, deviceId: string, id: string): Promise<CommandRow | null> {
    return this.db.one<CommandRow>(
      `SELECT id, type, payload, status, elevation_request_id, created_at FROM device_commands WHERE org_id = $1 AND device_id = $2 AND id = $3`,
      [orgId, deviceId, id],
    );
  }
}
