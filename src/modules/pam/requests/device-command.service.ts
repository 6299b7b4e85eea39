import { Injectable } from '@nestjs/common';
import { DeviceCommandRepository, type DeviceCommandRow } from './device-command.repository';

export type { DeviceCommandRow };

/**
 * Device commands belong to PAM, which queues, withdraws and revokes them with the elevation
 * requests they carry out; the agent module fetches them (app_agent_commands_take) and reports
 * their results here, in its request's transaction.
 */
@Injectable()
export class DeviceCommandService {
  constructor(private readonly repo: DeviceCommandRepository) {}

  /** Records the result once: null when the command is unknown to this device or already has one. */
  complete(orgId: string, deviceId: string, id: string, status: 'completed' | 'failed', error: string | null): Promise<DeviceCommandRow | null> {
    return this.repo.complete(orgId, deviceId, id, status, error);
  }

  /** The agent has the command (it is not handed out again); the command's status, or null when it is unknown to this device. */
  async acknowledge(orgId: string, deviceId: string, id: string): Promise<string | null> {
    return (await this.repo.acknowledge(orgId, deviceId, id))?.status ?? null;
  }
}
