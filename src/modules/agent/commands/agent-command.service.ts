import { Injectable } from '@nestjs/common';
import { scopeOf, type Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { DeviceCommandService, type CommandRow } from '../../pam/requests/device-command.service';
import { ElevationTransitionService } from '../../pam/requests/elevation-transition.service';
import type { AgentCommandDto, AgentCommandListDto, CommandAckResponseDto, CommandResultDto, CommandResultResponseDto } from './agent-command.dto';
import { AgentCommandErrors } from './agent-command.errors';
import { AgentCommandRepository } from './agent-command.repository';
import { CommandQueueReads } from './command-queue-reads';
import { CommandWakeups } from './command-wakeups';
import { AgentPresenceService } from '../../tenancy/devices/agent-presence.service';

/** The longest wait an agent may hold (`wait`, seconds). */
export const MAX_WAIT_SECONDS = 60;
/** A wait reads the queue again for a redelivery no sooner than this (the due time is rounded, the clocks are two). */
const REREAD_FLOOR_MS = 50;
/** A stopping instance asks its waiting agents to come back after a random pause in this range, so that a fleet does not reconnect at once. */
export const RECONNECT_AFTER_MS = { min: 500, max: 8_000 } as const;

const toDto = (c: CommandRow): AgentCommandDto => ({ id: c.id, type: c.type, payload: c.payload, createdAt: c.created_at.toISOString(), deliveryCount: c.delivery_count });

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
    private readonly wakeups: CommandWakeups,
    private readonly presence: AgentPresenceService,
    private readonly reads: CommandQueueReads,
  ) {}

  /**
   * The device's due commands. With `waitSeconds`, a held wait: when nothing is due the request
   * stays open until a command for the device commits (on any instance), the wait ends (an empty
   * list), the agent goes away, or the instance stops (an empty list with `reconnectAfterMs`).
   * No connection or transaction is held while waiting: each read of the queue is one statement.
   */
  async fetch(principal: Principal, waitSeconds = 0, gone?: AbortSignal): Promise<AgentCommandListDto> {
    const { orgId, deviceId, agentId } = principal.agent!;
    const scope = scopeOf(principal);
    const take = () => this.reads.take({ orgId, deviceId, agentId }, scope);
    if (waitSeconds <= 0) return { commands: (await take()).commands.map(toDto) };
    const deadline = Date.now() + waitSeconds * 1000;
    // Armed before the first read: a command committed between that read and the wait still wakes it.
    const waiter = this.wakeups.register(orgId, deviceId);
    const leave = () => waiter.end('timeout');
    gone?.addEventListener('abort', leave);
    try {
      for (;;) {
        // An agent that went away takes nothing: what it would be handed would reach no one until redelivered.
        if (gone?.aborted) return { commands: [] };
        const { commands, redeliverInMs } = await take();
        if (commands.length || gone?.aborted) return { commands: commands.map(toDto) };
        // An unacknowledged delivery falling due within the wait is read again then (at least once, even for a crashed agent).
        const until = redeliverInMs === null ? deadline : Math.min(deadline, Date.now() + Math.max(REREAD_FLOOR_MS, redeliverInMs));
        const outcome = await waiter.next(until - Date.now());
        if (outcome === 'drain') return { commands: [], reconnectAfterMs: reconnectAfterMs() };
        if (outcome === 'timeout' && Date.now() >= deadline) return { commands: [] };
      }
    } finally {
      gone?.removeEventListener('abort', leave);
      waiter.close();
      // Held until now: the agent was there all along (the guard saw it arrive).
      this.presence.seen(agentId, orgId);
    }
  }

  /** The agent has the command: it is not handed out again. 404 for a command of another device. */
  async acknowledge(principal: Principal, commandId: string): Promise<CommandAckResponseDto> {
    const { orgId, deviceId } = principal.agent!;
    const status = await this.commands.acknowledge(orgId, deviceId, commandId);
    if (!status) throw AgentCommandErrors.notFound();
    return { commandId, status: status as CommandAckResponseDto['status'] };
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

/** A pause drawn evenly from RECONNECT_AFTER_MS. */
function reconnectAfterMs(): number {
  return Math.round(RECONNECT_AFTER_MS.min + Math.random() * (RECONNECT_AFTER_MS.max - RECONNECT_AFTER_MS.min));
}
