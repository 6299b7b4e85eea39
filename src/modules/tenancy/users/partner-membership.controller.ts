import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { CreatePartnerMembershipDto, UserResponseDto } from './user.dto';
import { MembershipService } from './membership.service';

@ApiTags('users')
@Controller('partner-memberships')
export class PartnerMembershipController {
  constructor(private readonly memberships: MembershipService) {}

  /** Makes an existing or new user a technician of the caller's partner. */
  @Post()
  @Auth({ permission: 'users:write', mfa: true, partnerScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreatePartnerMembershipDto): Promise<UserResponseDto> {
    return this.memberships.createPartnerMembership(principal, dto);
  }
}
