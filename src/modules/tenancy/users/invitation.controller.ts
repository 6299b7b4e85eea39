import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { InvitationListDto } from './invitation.dto';
import { InvitationService } from './invitation.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

/** The caller's own invitations to other tenants (an existing account added by another organization or partner). */
@ApiTags('users')
@Controller('invitations')
export class InvitationController {
  constructor(private readonly invitations: InvitationService) {}

  /**
   * Lists the invitations waiting for the signed-in user.
   *
   * @remarks Any signed-in user; each names the inviting organization or partner.
   */
  @Get()
  @Auth()
  @ApiErrors({ 403: ['user_required'] })
  list(@CurrentPrincipal() principal: Principal): Promise<InvitationListDto> {
    return this.invitations.list(principal);
  }

  /**
   * Accepts an invitation: joins the organization or partner with the role and sites it names.
   *
   * @remarks The invited person only, at a session (not with an API key). 409 `membership_exists` when already a
   * technician of a partner; 409 `invitation_stale` when the person who sent it can no longer grant its role, sites or
   * organizations (it is applied now, so it is checked now).
   */
  @Post(':id/accept')
  @HttpCode(200)
  @Auth()
  @ApiErrors({ 403: ['user_required'], 409: ['membership_exists', 'invitation_stale'] })
  accept(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.invitations.accept(principal, id);
  }

  /**
   * Declines an invitation.
   *
   * @remarks The invited person only.
   */
  @Delete(':id')
  @Auth()
  @ApiErrors({ 403: ['user_required'] })
  decline(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.invitations.decline(principal, id);
  }
}
