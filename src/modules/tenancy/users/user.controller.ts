import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { CreateMembershipDto, CreateUserDto, ListUsersQueryDto, UpdateMembershipDto, UserListDto, UserResponseDto } from './user.dto';
import { MembershipService } from './membership.service';
import { UserService } from './user.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('users')
@Controller('users')
export class UserController {
  constructor(
    private readonly users: UserService,
    private readonly memberships: MembershipService,
  ) {}

  /**
   * Lists the users of the organizations or partner the caller can reach, a page at a time.
   *
   * @remarks Needs `users:read`.
   */
  @Get()
  @Auth({ permission: 'users:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListUsersQueryDto): Promise<UserListDto> {
    return this.users.list(principal, query);
  }

  /**
   * Reads one user with the memberships the caller can see.
   *
   * @remarks Needs `users:read`. 404 for a user outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'users:read' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<UserResponseDto> {
    return this.users.get(principal, id);
  }

  /**
   * Adds a user to an organization with a role (and optionally a set of sites).
   *
   * @remarks Needs `users:write` and an MFA session. A new email creates the account. An email whose account this
   * tenant cannot see becomes an invitation that its owner accepts at `/invitations`, with the same answer. 409
   * `email_taken` for a user the tenant already sees; 403 `privilege_escalation` for a role beyond the caller's
   * own permissions.
   */
  @Post()
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 400: ['role_scope_mismatch'], 403: ['privilege_escalation'], 409: ['email_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateUserDto): Promise<UserResponseDto> {
    return this.users.create(principal, dto);
  }

  /**
   * Gives a user a membership in another organization.
   *
   * @remarks Needs `users:write` and an MFA session. 409 `membership_exists` when the user is already a member.
   */
  @Post(':id/memberships')
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 400: ['role_scope_mismatch'], 403: ['privilege_escalation'], 409: ['membership_exists'] })
  addMembership(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: CreateMembershipDto): Promise<UserResponseDto> {
    return this.memberships.add(principal, id, dto);
  }

  /**
   * Changes the role or sites of a user's membership in an organization.
   *
   * @remarks Needs `users:write` and an MFA session. 403 `privilege_escalation` for a role beyond the caller's own
   * permissions; 403 `person_out_of_reach` when the member holds more than the caller has authority over (a
   * permission, or a site, beyond the caller's).
   */
  @Patch(':id/memberships/:orgId')
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 400: ['role_scope_mismatch'], 403: ['privilege_escalation', 'person_out_of_reach'] })
  updateMembership(
    @CurrentPrincipal() principal: Principal,
    @UuidParam() id: string,
    @UuidParam('orgId') orgId: string,
    @Body() dto: UpdateMembershipDto,
  ): Promise<UserResponseDto> {
    return this.memberships.update(principal, id, orgId, dto);
  }

  /**
   * Removes a user from an organization.
   *
   * @remarks Needs `users:write` and an MFA session. 403 `person_out_of_reach` when the member holds more than the
   * caller has authority over.
   */
  @Delete(':id/memberships/:orgId')
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 403: ['person_out_of_reach'] })
  removeMembership(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('orgId') orgId: string): Promise<SuccessDto> {
    return this.memberships.remove(principal, id, orgId);
  }
}
