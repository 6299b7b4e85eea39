import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AgentAuth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import { UuidParam } from '../../common/pipes/uuid.pipe';
import type { Principal } from '../../common/principal';
import { AgentCommandListDto, CommandResultDto, CommandResultResponseDto } from './agent-command.dto';
import { AgentCommandService } from './agent-command.service';

@ApiTags('agents')
@Controller('agents')
export class AgentCommandController {
  constructor(private readonly commands: AgentCommandService) {}

  /** Queued commands of the agent's device, oldest first; each is handed out once. */
  @Get(':id/commands')
  @AgentAuth()
  fetch(@CurrentPrincipal() principal: Principal): Promise<AgentCommandListDto> {
    return this.commands.fetch(principal);
  }

  @Post(':id/commands/:commandId/result')
  @HttpCode(200)
  @AgentAuth()
  report(@CurrentPrincipal() principal: Principal, @UuidParam('commandId') commandId: string, @Body() dto: CommandResultDto): Promise<CommandResultResponseDto> {
    return this.commands.report(principal, commandId, dto);
  }
}
