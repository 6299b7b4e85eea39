import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { AuditService } from '../audit/audit.service';
import { ElevationRequestRepository } from '../pam/requests/elevation-request.repository';
import { PamEventService } from '../pam/requests/pam-event.service';
import type { AgentCommandDto, AgentCommandListDto, CommandResultDto, CommandResultResponseDto } from './agent-command.dto';
import { AgentCommandErrors } from './agent-command.errors';
import { AgentCommandRepository, CommandRow } from './agent-command.repository';

export const COMMANDS_PER_FETCH = 50;

const toDto = (c: CommandRow): AgentCommandDto => ({ id: c.id, type: c.type, payload: c.payload, createdAt: c.created_at.toISOString() });

/**
 * The agent's side of device commands (docs/pam-lifecycle.md, "Actuation and agent commands"). A failed actuation returns its request
 * to approved when the window is still open, so it can be actuated again; a completed one leaves
 * it actuating until its expiresAt.
 */
@Injectable()
export class AgentCommandService {
  constructor(
    private readonly repo: AgentCommandRepository,
    private readonly requests: ElevationRequestRepository,
    private readonly events: PamEventService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async fetch(principal: Principal): Promise<AgentCommandListDto> {
    const { orgId, deviceId } = principal.agent!;
    const commands = await this.repo.take(orgId, deviceId, COMMANDS_PER_FETCH);
    return { commands: commands.map(toDto) };
  }

  async report(principal: Principal, commandId: string, dto: CommandResultDto): Promise<CommandResultResponseDto> {
    const { orgId, deviceId } = principal.agent!;
    const error = dto.status === 'failed' ? (dto.error ?? null) : null;
    const command = await this.repo.complete(orgId, deviceId, commandId, dto.status, error);
    if (!command) {
      const existing = await this.repo.find(orgId, deviceId, commandId);
      throw existing ? AgentCommandErrors.alreadyReported(existing.status) : AgentCommandErrors.notFound();
    }
    if (command.type === 'actuate_elevation' && command.elevation_request_id) await this.recordActuation(orgId, command.elevation_request_id, commandId, dto.status, error);
    await this.audit.record({
      action: 'pam.command.result',
      orgId,
      resourceType: 'device_command',
      resourceId: commandId,
      details: { type: command.type, status: dto.status, deviceId, elevationRequestId: command.elevation_request_id, ...(error ? { error } : {}) },
    });
    return { success: true, commandId, status: dto.status };
  }

  private async recordActuation(orgId: string, elevationRequestId: string, commandId: string, status: 'completed' | 'failed', error: string | null): Promise<void> {
    const details = { commandId, ...(error ? { error } : {}) };
    const type = status === 'completed' ? 'actuation_completed' : 'actuation_failed';
    const released = status === 'failed' ? await this.requests.releaseActuation(elevationRequestId) : null;
    if (released) {
      await this.events.record({ orgId, elevationRequestId, type, fromStatus: released.from_status, toStatus: released.status, details });
      return;
    }
    // No transition (completed, or a failure after the request was revoked or expired): the event still records the result.
    const current = await this.requests.find(elevationRequestId, this.config.pamPendingTtlMinutes);
    if (current) await this.events.record({ orgId, elevationRequestId, type, fromStatus: current.effective_status, toStatus: current.effective_status, details });
  }
}
