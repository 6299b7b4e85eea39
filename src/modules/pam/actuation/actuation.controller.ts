import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { ActuateElevationDto, ActuationResultDto } from './actuation.dto';
import { ActuationService } from './actuation.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('pam')
@Controller('devices')
export class ActuationController {
  constructor(private readonly actuation: ActuationService) {}

  /**
   * Actuates an approved elevation on this device: queues the command that releases it on the agent.
   *
   * @remarks Needs `devices:execute` and an MFA session, and the actuator switched on (`PAM_ACTUATOR_ENABLED`,
   * else 403 `pam_actuator_disabled`). `timeoutMs` 1000–60000, default 8000. 400 `device_decommissioned` or
   * `flow_not_actuatable` (AI tool actions); 404 for an unknown device or a request not of this device; 409
   * `wrong_status` (with `currentStatus`) when the request is not approved, `race_lost` when another actuation
   * claimed it first.
   */
  @Post(':id/actuate-elevation')
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  @ApiErrors({ 400: ['device_decommissioned', 'flow_not_actuatable'], 403: ['pam_actuator_disabled'], 409: ['wrong_status', 'race_lost'] })
  actuate(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: ActuateElevationDto): Promise<ActuationResultDto> {
    return this.actuation.actuate(principal, id, dto);
  }
}
