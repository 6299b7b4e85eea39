import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentAuth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { AgentCommandListDto, CommandAckResponseDto, CommandResultDto, CommandResultResponseDto, FetchCommandsQueryDto } from './agent-command.dto';
import { AgentCommandService } from './agent-command.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';

@ApiTags('agents')
@Controller('agents')
export class AgentCommandController {
  constructor(private readonly commands: AgentCommandService) {}

  /**
   * Fetches the device's due commands, oldest first: those queued, and those delivered earlier but not
   * acknowledged within the redelivery time. With `wait`, holds the request open until one is due.
   *
   * @remarks The agent's token. At most 50 per call. `wait` (0–60 s, default 0) holds the request while nothing is due:
   * a command committed meanwhile, on any instance, is answered within a fraction of a second; at the end of the wait
   * the list is empty. An instance that is stopping answers its waits with an empty list and `reconnectAfterMs`.
   * Delivery is at least once: a command is handed out again (`deliveryCount` above 1) until it is acknowledged
   * (`POST …/ack`) or its result is reported; its `id` is the agent's key to recognise one it already has. An
   * actuation whose elevation is no longer being actuated is withdrawn instead, never delivered late.
   */
  @Get(':id/commands')
  @AgentAuth()
  // Each read of the queue is one statement alone with the agent's settings (app_agent_commands_take); a held wait holds no connection.
  @NoRequestTransaction()
  fetch(@CurrentPrincipal() principal: Principal, @Query() q: FetchCommandsQueryDto, @Res({ passthrough: true }) res: Response): Promise<AgentCommandListDto> {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    return this.commands.fetch(principal, q.wait ?? 0, gone.signal);
  }

  /**
   * Acknowledges a delivered command: it is not handed out again.
   *
   * @remarks The agent's token. Idempotent; answers the command's status. 404 for a command of another device.
   */
  @Post(':id/commands/:commandId/ack')
  @HttpCode(200)
  @AgentAuth()
  ack(@CurrentPrincipal() principal: Principal, @UuidParam('commandId') commandId: string): Promise<CommandAckResponseDto> {
    return this.commands.acknowledge(principal, commandId);
  }

  /**
   * Reports the outcome of a command: `completed` or `failed`.
   *
   * @remarks The agent's token. A failed actuation returns its request to `approved` while the window is open, so
   * it can be actuated again. 404 for a command of another device; 409 `command_already_reported` for a second
   * report.
   */
  @Post(':id/commands/:commandId/result')
  @HttpCode(200)
  @AgentAuth()
  @ApiErrors({ 409: ['command_already_reported'] })
  report(@CurrentPrincipal() principal: Principal, @UuidParam('commandId') commandId: string, @Body() dto: CommandResultDto): Promise<CommandResultResponseDto> {
    return this.commands.report(principal, commandId, dto);
  }
}
