import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { OneStatement } from '../../../common/decorators/one-statement.decorator';
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
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('pam')
@Controller('pam')
export class ElevationRequestController {
  constructor(private readonly requests: ElevationRequestService) {}

  /**
   * Lists elevation requests, newest first, a page at a time.
   *
   * @remarks Needs `devices:read`. Filters: `status`, `flowType`, `deviceId`, `siteId`, `from`/`to` (request time,
   * inclusive), `orgId`. A site-restricted caller sees only their sites.
   */
  @Get('elevation-requests')
  @Auth({ permission: 'devices:read', siteScope: true })
  @OneStatement()
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListElevationRequestsQueryDto): Promise<ElevationRequestListDto> {
    return this.requests.list(principal, query);
  }

  /**
   * Lists the elevations in force now: approved, auto-approved or actuating, window not ended.
   *
   * @remarks Needs `devices:read`. At most 500.
   */
  @Get('active')
  @Auth({ permission: 'devices:read', siteScope: true })
  @OneStatement()
  active(@CurrentPrincipal() principal: Principal): Promise<ActiveElevationListDto> {
    return this.requests.active(principal);
  }

  /**
   * Reads one elevation request with its history of transitions.
   *
   * @remarks Needs `devices:read`. 404 for a request outside the caller's reach.
   */
  @Get('elevation-requests/:id')
  @Auth({ permission: 'devices:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ElevationRequestDetailDto> {
    return this.requests.get(principal, id);
  }

  /**
   * Approves or denies a pending elevation request.
   *
   * @remarks Needs `devices:execute` and an MFA session. `durationMinutes` (1–1440, default 15) sets an approval's
   * window. 403 `self_approval` for a request the caller filed; 409 `not_pending` (with `currentStatus`) when it
   * was already decided or expired.
   */
  @Post('elevation-requests/:id/respond')
  @HttpCode(200)
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  @ApiErrors({ 403: ['self_approval'], 409: ['not_pending'] })
  respond(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: RespondElevationRequestDto): Promise<ElevationTransitionResultDto> {
    return this.requests.respond(principal, id, dto);
  }

  /**
   * Revokes an elevation in force, with a reason.
   *
   * @remarks Needs `devices:execute` and an MFA session. An elevation already actuated on the device is withdrawn
   * there too. 409 `not_active` (with `currentStatus`) when it is no longer in force.
   */
  @Post('elevation-requests/:id/revoke')
  @HttpCode(200)
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  @ApiErrors({ 409: ['not_active'] })
  revoke(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: RevokeElevationRequestDto): Promise<ElevationTransitionResultDto> {
    return this.requests.revoke(principal, id, dto);
  }
}
