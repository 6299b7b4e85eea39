import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import {
  ActiveElevationListDto,
  ElevationRequestDetailDto,
  ElevationRequestListDto,
  ElevationTransitionResultDto,
  ListElevationRequestsQueryDto,
  RespondElevationRequestDto,
  RevokeElevationRequestDto,
} from './elevation-request.dto';
import { ElevationRequestService } from './elevation-request.service';

@ApiTags('pam')
@Controller('pam')
export class ElevationRequestController {
  constructor(private readonly requests: ElevationRequestService) {}

  @Get('elevation-requests')
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListElevationRequestsQueryDto): Promise<ElevationRequestListDto> {
    return this.requests.list(principal, query);
  }

  /** Up to 500 elevations in force now (approved, auto_approved or actuating, window not ended). */
  @Get('active')
  @Auth({ permission: 'devices:read', siteScope: true })
  active(@CurrentPrincipal() principal: Principal): Promise<ActiveElevationListDto> {
    return this.requests.active(principal);
  }

  /** One request with its transition log. */
  @Get('elevation-requests/:id')
  @Auth({ permission: 'devices:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ElevationRequestDetailDto> {
    return this.requests.get(principal, id);
  }

  @Post('elevation-requests/:id/respond')
  @HttpCode(200)
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  respond(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: RespondElevationRequestDto): Promise<ElevationTransitionResultDto> {
    return this.requests.respond(principal, id, dto);
  }

  @Post('elevation-requests/:id/revoke')
  @HttpCode(200)
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  revoke(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: RevokeElevationRequestDto): Promise<ElevationTransitionResultDto> {
    return this.requests.revoke(principal, id, dto);
  }
}
