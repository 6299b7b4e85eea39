import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { DeviceCommandService } from '../../pam/requests/device-command.service';
import { ElevationTransitionService } from '../../pam/requests/elevation-transition.service';
import type { AgentCommandDto, AgentCommandListDto, CommandResultDto, CommandResultResponseDto } from './agent-command.dto';
import { AgentCommandErrors } from './agent-command.errors';
import { AgentCommandRepository, CommandRow } from './agent-command.repository';

export const COMMANDS_PER_FETCH = 50;

const toDto = (c: CommandRow): AgentCommandDto => ({ id: c.id, type: c.type, payload: c.payload, createdAt: c.created_at.toISOString() });

/**
 * The agent's side of device commands (docs/pam-lifecycle.md, "Actuation and agent commands"). The
 * result of an actuation is handed to PAM's transitions, which move the elevation request.
 */
@Injectable()
export class AgentCommandService {
  constructor(
    private readonly repo: AgentCommandRepository,
    private readonly transitions: ElevationTransitionService,
    private readonly commands: DeviceCommandService,
    private readonly audit: AuditService,
  ) {}

  async fetch(principal: Principal): Promise<AgentCommandListDto> {
    const { orgId, deviceId } = principal.agent!;
    const commands = await this.repo.take(orgId, deviceId, COMMANDS_PER_FETCH);
    return { commands: commands.map(toDto) };
  }

  async report(principal: Principal, commandId: string, dto: CommandResultDto): Promise<CommandResultResponseDto> {
    const { orgId, deviceId } = principal.agent!;
    const error = dto.status === 'failed' ? (dto.error ?? null) : null;
    const command = await this.commands.complete(orgId, deviceId, commandId, dto.status, error);
    if (!command) {
      const existing = await this.repo.find(orgId, deviceId, commandId);
      throw existing ? AgentCommandErrors.alreadyReported(existing.status) : AgentCommandErrors.notFound();
    }
    if (command.type === 'actuate_elevation' && command.elevation_request_id) {
      await this.transitions.recordActuationResult(orgId, command.elevation_request_id, commandId, dto.status, error);
    }
    await this.audit.record({
      action: 'pam.command.result',
      orgId,
      resourceType: 'device_command',
      resourceId: commandId,
      details: { type: command.type, status: dto.status, deviceId, elevationRequestId: command.elevation_request_id, ...(error ? { error } : {}) },
    });
    return { success: true, commandId, status: dto.status };
  }
}
