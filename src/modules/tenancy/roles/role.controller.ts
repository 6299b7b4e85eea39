import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../shared/pagination.dto';
import { CreateRoleDto, ListRolesQueryDto, RoleListDto, RoleResponseDto, UpdateRoleDto } from './role.dto';
import { RoleService } from './role.service';

@ApiTags('roles')
@Controller('roles')
export class RoleController {
  constructor(private readonly roles: RoleService) {}

  @Get()
  @Auth({ permission: 'users:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListRolesQueryDto): Promise<RoleListDto> {
    return this.roles.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'users:read' })
  get(@UuidParam() id: string): Promise<RoleResponseDto> {
    return this.roles.get(id);
  }

  @Post()
  @Auth({ permission: 'users:write', mfa: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateRoleDto): Promise<RoleResponseDto> {
    return this.roles.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'users:write', mfa: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateRoleDto): Promise<RoleResponseDto> {
    return this.roles.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'users:write', mfa: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.roles.delete(principal, id);
  }
}
