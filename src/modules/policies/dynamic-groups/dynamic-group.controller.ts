import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../tenancy/shared/pagination.dto';
import {
  CreateDynamicGroupDto,
  DynamicGroupListDto,
  DynamicGroupResponseDto,
  GroupMembersDto,
  GroupMembersQueryDto,
  ListDynamicGroupsQueryDto,
  UpdateDynamicGroupDto,
} from './dynamic-group.dto';
import { DynamicGroupService } from './dynamic-group.service';

/** Dynamic device groups are policy targets, so they share the policies permissions (writes need MFA). */
@ApiTags('policies')
@Controller('dynamic-groups')
export class DynamicGroupController {
  constructor(private readonly groups: DynamicGroupService) {}

  @Get()
  @Auth({ permission: 'policies:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListDynamicGroupsQueryDto): Promise<DynamicGroupListDto> {
    return this.groups.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'policies:read' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DynamicGroupResponseDto> {
    return this.groups.get(principal, id);
  }

  @Get(':id/members')
  @Auth({ permission: 'policies:read' })
  members(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Query() query: GroupMembersQueryDto): Promise<GroupMembersDto> {
    return this.groups.members(principal, id, query);
  }

  @Post()
  @Auth({ permission: 'policies:write', mfa: true, siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateDynamicGroupDto): Promise<DynamicGroupResponseDto> {
    return this.groups.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'policies:write', mfa: true, siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateDynamicGroupDto): Promise<DynamicGroupResponseDto> {
    return this.groups.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'policies:write', mfa: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.groups.delete(principal, id);
  }
}
