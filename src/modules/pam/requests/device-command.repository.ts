import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';

export interface DeviceCommandRow {
  id: string;
  type: 'actuate_elevation' | 'revoke_elevation';
  payload: Record<string, unknown>;
  status: string;
  elevation_request_id: string | null;
  created_at: Date;
}

/** One poll, one call: app_agent_commands_take (migrations 1763700951000, 1763702200000), whose plan the server keeps. */
const TAKE_COMMANDS = prepared(
  'agent_commands_take_v2',
  `SELECT id, type, payload, status, elevation_request_id, created_at, delivery_count, redeliver_in_ms FROM app_agent_commands_take($1, $2, $3, $4, make_interval(secs => $5))`,
);

/** Many agents' reads in one call, each exactly as TAKE_COMMANDS (migration 1763702900000); `n` names the read a row answers. */
const TAKE_COMMANDS_MANY = prepared(
  'agent_commands_take_many',
  `SELECT n, id, type, payload, status, elevation_request_id, created_at, delivery_count, redeliver_in_ms
     FROM app_agent_commands_take_many($1::uuid[], $2::uuid[], $3::uuid[], $4, make_interval(secs => $5))`,
);

/** A command as an agent's read of its queue hands it out. */
export type CommandRow = DeviceCommandRow & { delivery_count: number };

/** Which device's queue to read, for which agent (all three from the agent's token). */
export interface QueueRead {
  orgId: string;
  deviceId: string;
  agentId: string;
}

/** What a read of the queue hands out, and (nothing handed out) in how long an unacknowledged delivery is due again. */
export interface Take {
  commands: CommandRow[];
  redeliverInMs: number | null;
}

type TakenRow = CommandRow & { redeliver_in_ms: number | null };

function taken(rows: TakenRow[]): Take {
  const marker = rows.find((r) => r.id === null);
  const commands = rows.filter((r) => r.id !== null).sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
  return { commands, redeliverInMs: marker?.redeliver_in_ms ?? null };
}

/**
 * The commands PAM queued for devices, as their agents read them (the poll hands them out and
 * withdraws actuations that must not reach the device) and report their results; the device always
 * comes from the agent's token.
 */
@Injectable()
export class DeviceCommandRepository {
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
    return taken(await this.db.rows<TakenRow>(TAKE_COMMANDS, [orgId, deviceId, agentId, limit, redeliverSeconds]));
  }

  /**
   * take() for several reads in one statement, in the order given (a device named twice is read
   * twice, the second read seeing what the first handed out): one Take per read. Runs in system
   * context: every read names its organization, device and agent, all from an agent's token.
   */
  async takeMany(reads: readonly QueueRead[], limit: number, redeliverSeconds: number): Promise<Take[]> {
    const rows = await this.db.rows<TakenRow & { n: number }>(TAKE_COMMANDS_MANY, [
      reads.map((r) => r.orgId),
      reads.map((r) => r.deviceId),
      reads.map((r) => r.agentId),
      limit,
      redeliverSeconds,
    ]);
    const byRead: TakenRow[][] = reads.map(() => []);
    for (const row of rows) byRead[row.n - 1].push(row);
    return byRead.map(taken);
  }

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
