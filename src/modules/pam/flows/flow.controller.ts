import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { CreateJitRequestDto, CreateToolActionDto, FlowRequestResultDto, ToolActionResultDto } from './flow.dto';
import { FlowService } from './flow.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('pam')
@Controller('pam')
export class FlowController {
  constructor(private readonly flows: FlowService) {}

  /**
   * Asks for just-in-time admin rights on a device for the calling technician.
   *
   * @remarks Needs `devices:execute` and an MFA session; a person only. No PAM rule decides it: the organization
   * default makes it pending, for another technician to approve, or denies it under `auto_deny`.
   */
  @Post('jit-requests')
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  @ApiErrors({ 400: ['device_decommissioned'], 403: ['user_required'] })
  requestJit(@CurrentPrincipal() principal: Principal, @Body() dto: CreateJitRequestDto): Promise<FlowRequestResultDto> {
    return this.flows.requestJit(principal, dto);
  }

  /**
   * Submits an AI tool's action on a device for a decision.
   *
   * @remarks Needs `devices:execute` (no MFA: the callers are automations and API keys). Decided by tool-action
   * rules, then the organization default; the tool's risk tier comes from the registry built into this API
   * version. The input is not stored, only its SHA-256 `actionDigest`.
   */
  @Post('tool-actions')
  @Auth({ permission: 'devices:execute', siteScope: true })
  @ApiErrors({ 400: ['device_decommissioned'] })
  requestToolAction(@CurrentPrincipal() principal: Principal, @Body() dto: CreateToolActionDto): Promise<ToolActionResultDto> {
    return this.flows.requestToolAction(principal, dto);
  }
}
