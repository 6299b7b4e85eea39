import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import {
  ApprovalListDto,
  DecideApprovalDto,
  DecideApprovalResultDto,
  MobileDeviceDeletedDto,
  MobileDeviceListDto,
  MobileDeviceResponseDto,
  RegisterMobileDeviceDto,
} from './approval.dto';
import { ApprovalService } from './approval.service';
import { MobileDeviceService } from './mobile-device.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('mobile approvals')
@Controller()
export class ApprovalController {
  constructor(
    private readonly approvals: ApprovalService,
    private readonly phones: MobileDeviceService,
  ) {}

  /**
   * Registers the signed-in user's phone for approval pushes.
   *
   * @remarks A person only (403 `user_required` for an API key). Registering the same push token again updates it;
   * at most 10 phones per user (409 `too_many_mobile_devices`).
   */
  @Post('mobile-devices')
  @Auth()
  @ApiErrors({ 403: ['user_required'], 409: ['too_many_mobile_devices'] })
  register(@CurrentPrincipal() principal: Principal, @Body() dto: RegisterMobileDeviceDto): Promise<MobileDeviceResponseDto> {
    return this.phones.register(principal, dto);
  }

  /**
   * Lists the signed-in user's registered phones.
   *
   * @remarks Push tokens are never returned.
   */
  @Get('mobile-devices')
  @Auth()
  @ApiErrors({ 403: ['user_required'] })
  listPhones(@CurrentPrincipal() principal: Principal): Promise<MobileDeviceListDto> {
    return this.phones.list(principal);
  }

  /** Removes one of the signed-in user's phones; it receives no more approval pushes. */
  @Delete('mobile-devices/:id')
  @Auth()
  @ApiErrors({ 403: ['user_required'] })
  removePhone(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<MobileDeviceDeletedDto> {
    return this.phones.remove(principal, id);
  }

  /**
   * Lists the caller's approval requests that can still be decided, soonest to lapse first.
   *
   * @remarks Needs `devices:execute`. At most 200.
   */
  @Get('approvals')
  @Auth({ permission: 'devices:execute', siteScope: true })
  @ApiErrors({ 403: ['user_required'] })
  list(@CurrentPrincipal() principal: Principal): Promise<ApprovalListDto> {
    return this.approvals.list(principal);
  }

  /**
   * Approves or denies an elevation request from a phone's approval request.
   *
   * @remarks Needs `devices:execute` and an MFA session, checked again at decision time. The first decision wins,
   * from a phone or the console. 409 `already_decided` (with `currentStatus`) once it or the request was decided;
   * 410 `expired` past its expiry.
   */
  @Post('approvals/:id/decide')
  @HttpCode(200)
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  @ApiErrors({ 403: ['self_approval', 'user_required'], 409: ['already_decided'], 410: ['expired'] })
  decide(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: DecideApprovalDto): Promise<DecideApprovalResultDto> {
    return this.approvals.decide(principal, id, dto);
  }
}
