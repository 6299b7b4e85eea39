import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { ActuateElevationDto, ActuationResultDto } from './actuation.dto';
import { ActuationService } from './actuation.service';

@ApiTags('pam')
@Controller('devices')
export class ActuationController {
  constructor(private readonly actuation: ActuationService) {}

  /** Queues an actuate_elevation command for an approved request of this device (needs PAM_ACTUATOR_ENABLED). */
  @Post(':id/actuate-elevation')
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  actuate(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: ActuateElevationDto): Promise<ActuationResultDto> {
    return this.actuation.actuate(principal, id, dto);
  }
}
