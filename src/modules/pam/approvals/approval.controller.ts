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

@ApiTags('mobile approvals')
@Controller()
export class ApprovalController {
  constructor(
    private readonly approvals: ApprovalService,
    private readonly phones: MobileDeviceService,
  ) {}

  /** Registers the caller's phone for approval pushes (the same token again updates it). */
  @Post('mobile-devices')
  @Auth()
  register(@CurrentPrincipal() principal: Principal, @Body() dto: RegisterMobileDeviceDto): Promise<MobileDeviceResponseDto> {
    return this.phones.register(principal, dto);
  }

  @Get('mobile-devices')
  @Auth()
  listPhones(@CurrentPrincipal() principal: Principal): Promise<MobileDeviceListDto> {
    return this.phones.list(principal);
  }

  @Delete('mobile-devices/:id')
  @Auth()
  removePhone(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<MobileDeviceDeletedDto> {
    return this.phones.remove(principal, id);
  }

  /** The caller's approval requests that can still be decided. */
  @Get('approvals')
  @Auth({ permission: 'devices:execute', siteScope: true })
  list(@CurrentPrincipal() principal: Principal): Promise<ApprovalListDto> {
    return this.approvals.list(principal);
  }

  @Post('approvals/:id/decide')
  @HttpCode(200)
  @Auth({ permission: 'devices:execute', mfa: true, siteScope: true })
  decide(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: DecideApprovalDto): Promise<DecideApprovalResultDto> {
    return this.approvals.decide(principal, id, dto);
  }
}
