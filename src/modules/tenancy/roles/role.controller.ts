import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { CreateRoleDto, ListRolesQueryDto, RoleListDto, RoleResponseDto, UpdateRoleDto } from './role.dto';
import { RoleService } from './role.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('roles')
@Controller('roles')
export class RoleController {
  constructor(private readonly roles: RoleService) {}

  /**
   * Lists the roles of an organization or of the caller's partner.
   *
   * @remarks Needs `users:read`.
   */
  @Get()
  @Auth({ permission: 'users:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListRolesQueryDto): Promise<RoleListDto> {
    return this.roles.list(principal, query);
  }

  /**
   * Reads one role with its permissions.
   *
   * @remarks Needs `users:read`. 404 for a role outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'users:read' })
  get(@UuidParam() id: string): Promise<RoleResponseDto> {
    return this.roles.get(id);
  }

  /**
   * Creates a role: a name and a list of permissions, owned by an organization or the partner.
   *
   * @remarks Needs `users:write` and an MFA session. 403 `privilege_escalation` when the role would grant a
   * permission the caller does not hold; 409 `name_taken` for a name its owner already uses.
   */
  @Post()
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 403: ['privilege_escalation', 'partner_scope_required'], 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateRoleDto): Promise<RoleResponseDto> {
    return this.roles.create(principal, dto);
  }

  /**
   * Renames a role or changes its permissions.
   *
   * @remarks Needs `users:write` and an MFA session. 403 `privilege_escalation` for permissions beyond the
   * caller's own.
   */
  @Patch(':id')
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 403: ['privilege_escalation'], 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateRoleDto): Promise<RoleResponseDto> {
    return this.roles.update(principal, id, dto);
  }

  /**
   * Deletes a role that is no longer used.
   *
   * @remarks Needs `users:write` and an MFA session. 409 `role_in_use` while a membership or anything else still
   * refers to it.
   */
  @Delete(':id')
  @Auth({ permission: 'users:write', mfa: true })
  @ApiErrors({ 409: ['role_in_use'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.roles.delete(principal, id);
  }
}
