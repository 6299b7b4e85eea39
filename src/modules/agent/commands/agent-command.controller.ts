import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AgentAuth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { AgentCommandListDto, CommandResultDto, CommandResultResponseDto } from './agent-command.dto';
import { AgentCommandService } from './agent-command.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';
import { OneStatement } from '../../../common/decorators/one-statement.decorator';

@ApiTags('agents')
@Controller('agents')
export class AgentCommandController {
  constructor(private readonly commands: AgentCommandService) {}

  /**
   * Fetches the device's queued commands, oldest first; each is handed out once.
   *
   * @remarks The agent's token. At most 50 per call.
   */
  @Get(':id/commands')
  @AgentAuth()
  // One function call withdraws and hands out the commands (app_agent_commands_take).
  @OneStatement()
  fetch(@CurrentPrincipal() principal: Principal): Promise<AgentCommandListDto> {
    return this.commands.fetch(principal);
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
