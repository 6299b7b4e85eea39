import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../shared/pagination.dto';
import { CreateMembershipDto, CreateUserDto, ListUsersQueryDto, UpdateMembershipDto, UserListDto, UserResponseDto } from './user.dto';
import { MembershipService } from './membership.service';
import { UserService } from './user.service';

@ApiTags('users')
@Controller('users')
export class UserController {
  constructor(
    private readonly users: UserService,
    private readonly memberships: MembershipService,
  ) {}

  @Get()
  @Auth({ permission: 'users:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListUsersQueryDto): Promise<UserListDto> {
    return this.users.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'users:read' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<UserResponseDto> {
    return this.users.get(principal, id);
  }

  /** Creates a user with a first organization membership. */
  @Post()
  @Auth({ permission: 'users:write', mfa: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateUserDto): Promise<UserResponseDto> {
    return this.users.create(principal, dto);
  }

  @Post(':id/memberships')
  @Auth({ permission: 'users:write', mfa: true })
  addMembership(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: CreateMembershipDto): Promise<UserResponseDto> {
    return this.memberships.add(principal, id, dto);
  }

  @Patch(':id/memberships/:orgId')
  @Auth({ permission: 'users:write', mfa: true })
  updateMembership(
    @CurrentPrincipal() principal: Principal,
    @UuidParam() id: string,
    @UuidParam('orgId') orgId: string,
    @Body() dto: UpdateMembershipDto,
  ): Promise<UserResponseDto> {
    return this.memberships.update(principal, id, orgId, dto);
  }

  @Delete(':id/memberships/:orgId')
  @Auth({ permission: 'users:write', mfa: true })
  removeMembership(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('orgId') orgId: string): Promise<SuccessDto> {
    return this.memberships.remove(principal, id, orgId);
  }
}
