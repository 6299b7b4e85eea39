import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
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
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

/** Dynamic device groups are policy targets, so they share the policies permissions (writes need MFA). */
@ApiTags('policies')
@Controller('dynamic-groups')
export class DynamicGroupController {
  constructor(private readonly groups: DynamicGroupService) {}

  /**
   * Lists dynamic device groups: groups whose members follow a filter.
   *
   * @remarks Needs `policies:read`.
   */
  @Get()
  @Auth({ permission: 'policies:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListDynamicGroupsQueryDto): Promise<DynamicGroupListDto> {
    return this.groups.list(principal, query);
  }

  /**
   * Reads one dynamic device group with its filter.
   *
   * @remarks Needs `policies:read`. 404 for a group outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'policies:read' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DynamicGroupResponseDto> {
    return this.groups.get(principal, id);
  }

  /**
   * Lists the devices a dynamic group holds now, a page at a time.
   *
   * @remarks Needs `policies:read`. A site-restricted caller sees only the devices of their sites.
   */
  @Get(':id/members')
  @Auth({ permission: 'policies:read' })
  members(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Query() query: GroupMembersQueryDto): Promise<GroupMembersDto> {
    return this.groups.members(principal, id, query);
  }

  /**
   * Creates a dynamic device group from a filter on device fields and custom fields.
   *
   * @remarks Needs `policies:write` and an MFA session. Membership follows the filter from then on. 400 with the
   * path of a bad filter; 409 `name_taken`.
   */
  @Post()
  @Auth({ permission: 'policies:write', mfa: true, siteScope: true })
  @ApiErrors({ 400: ['site_not_in_organization'], 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateDynamicGroupDto): Promise<DynamicGroupResponseDto> {
    return this.groups.create(principal, dto);
  }

  /**
   * Changes a dynamic group's name, site or filter; its members follow at once.
   *
   * @remarks Needs `policies:write` and an MFA session.
   */
  @Patch(':id')
  @Auth({ permission: 'policies:write', mfa: true, siteScope: true })
  @ApiErrors({ 400: ['site_not_in_organization'], 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateDynamicGroupDto): Promise<DynamicGroupResponseDto> {
    return this.groups.update(principal, id, dto);
  }

  /**
   * Deletes a dynamic device group.
   *
   * @remarks Needs `policies:write` and an MFA session. 409 `group_in_use` while policies are assigned to it.
   */
  @Delete(':id')
  @Auth({ permission: 'policies:write', mfa: true })
  @ApiErrors({ 409: ['group_in_use'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.groups.delete(principal, id);
  }
}
