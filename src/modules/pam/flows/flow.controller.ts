import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { CreateJitRequestDto, CreateToolActionDto, FlowRequestResultDto, ToolActionResultDto } from './flow.dto';
import { FlowService } from './flow.service';

@ApiTags('pam')
@Controller('pam')
export class FlowController {
  constructor(private readonly flows: FlowService) {}

  /** Just-in-time admin on a device for the calling technician (flow tech_jit_admin). */
  @Post('jit-requests')
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  requestJit(@CurrentPrincipal() principal: Principal, @Body() dto: CreateJitRequestDto): Promise<FlowRequestResultDto> {
    return this.flows.requestJit(principal, dto);
  }

  /** An AI tool's action on a device (flow ai_tool_action), decided by tool-action rules and the organization default. */
  @Post('tool-actions')
  @Auth({ permission: 'devices:execute', siteScope: true })
  requestToolAction(@CurrentPrincipal() principal: Principal, @Body() dto: CreateToolActionDto): Promise<ToolActionResultDto> {
    return this.flows.requestToolAction(principal, dto);
  }
}
