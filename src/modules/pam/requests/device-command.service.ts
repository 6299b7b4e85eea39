import { Injectable } from '@nestjs/common';
import { DeviceCommandRepository, type CommandRow, type DeviceCommandRow, type QueueRead, type Take } from './device-command.repository';

export type { CommandRow, DeviceCommandRow, QueueRead, Take };

/**
 * Device commands belong to PAM, which queues, withdraws and revokes them with the elevation
 * requests they carry out; the agent module reads its device's queue (app_agent_commands_take,
 * app_agent_commands_take_many) and reports results here, in the scope or transaction it opened:
 * each call is the repository's one statement, nothing added.
 */
@Injectable()
export class DeviceCommandService {
  constructor(private readonly repo: DeviceCommandRepository) {}

  /**
   * One agent's read of its device's queue, one statement: withdraws the actuations that must no
   * longer reach the device, then hands out what is due (at most `limit`, oldest first, marked
   * delivered), or says when an unacknowledged delivery is due again.
   */
  take(read: QueueRead, limit: number, redeliverSeconds: number): Promise<Take> {
    return this.repo.take(read.orgId, read.deviceId, read.agentId, limit, redeliverSeconds);
  }

  /** Several agents' reads in one statement (system context), each exactly as take() alone, in the order given: one Take per read. */
  takeMany(reads: readonly QueueRead[], limit: number, redeliverSeconds: number): Promise<Take[]> {
    return this.repo.takeMany(reads, limit, redeliverSeconds);
  }

  /** Records the result once: null when the command is unknown to this device or already has one. */
  complete(orgId: string, deviceId: string, id: string, status: 'completed' | 'failed', error: string | null): Promise<DeviceCommandRow | null> {
    return this.repo.complete(orgId, deviceId, id, status, error);
  }

  /** The agent has the command (it is not handed out again); the command's status, or null when it is unknown to this device. */
  async acknowledge(orgId: string, deviceId: string, id: string): Promise<string | null> {
    return (await this.repo.acknowledge(orgId, deviceId, id))?.status ?? null;
  }
}
