import { Body, Controller, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { CreatePartnerMembershipDto, UserResponseDto } from './user.dto';
import { MembershipService } from './membership.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('users')
@Controller('partner-memberships')
export class PartnerMembershipController {
  constructor(private readonly memberships: MembershipService) {}

  /**
   * Makes a user a technician of the caller's partner, by email (a new account) or by user id.
   *
   * @remarks Needs `users:write`, an MFA session and a partner-scope session. Access to all organizations or to
   * selected ones, optionally limited to sites. An account the partner cannot see is invited instead, as for `POST
   * /users`. 403 `privilege_escalation` for a role or organizations beyond the caller's own.
   */
  @Post()
  @Auth({ permission: 'users:write', mfa: true, partnerScope: true })
  @ApiErrors({ 400: ['role_scope_mismatch', 'site_outside_org_access'], 403: ['privilege_escalation'], 409: ['email_taken', 'membership_exists'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreatePartnerMembershipDto): Promise<UserResponseDto> {
    return this.memberships.createPartnerMembership(principal, dto);
  }
}
