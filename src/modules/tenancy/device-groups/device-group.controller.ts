import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import {
  AddGroupMembersDto,
  CreateDeviceGroupDto,
  DeviceGroupListDto,
  DeviceGroupResponseDto,
  ListDeviceGroupsQueryDto,
  UpdateDeviceGroupDto,
} from './device-group.dto';
import { DeviceGroupService } from './device-group.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('device-groups')
@Controller('device-groups')
export class DeviceGroupController {
  constructor(private readonly groups: DeviceGroupService) {}

  /**
   * Lists device groups.
   *
   * @remarks Needs `devices:read`. A site-restricted caller sees only the groups of their sites.
   */
  @Get()
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListDeviceGroupsQueryDto): Promise<DeviceGroupListDto> {
    return this.groups.list(principal, query);
  }

  /**
   * Reads one device group with its members.
   *
   * @remarks Needs `devices:read`. 404 for a group outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'devices:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DeviceGroupResponseDto> {
    return this.groups.get(principal, id);
  }

  /**
   * Creates a device group, organization-wide or within one site.
   *
   * @remarks Needs `devices:write`. 409 `name_taken` for a name already used in the organization.
   */
  @Post()
  @Auth({ permission: 'devices:write', siteScope: true })
  @ApiErrors({ 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateDeviceGroupDto): Promise<DeviceGroupResponseDto> {
    return this.groups.create(principal, dto);
  }

  /**
   * Renames a device group, or moves it to one site or organization-wide.
   *
   * @remarks Needs `devices:write`. 409 `name_taken` for a name already used in the organization.
   */
  @Patch(':id')
  @Auth({ permission: 'devices:write', siteScope: true })
  @ApiErrors({ 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateDeviceGroupDto): Promise<DeviceGroupResponseDto> {
    return this.groups.update(principal, id, dto);
  }

  /**
   * Deletes a device group; its devices stay.
   *
   * @remarks Needs `devices:write`.
   */
  @Delete(':id')
  @Auth({ permission: 'devices:write', siteScope: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.groups.delete(principal, id);
  }

  /**
   * Adds devices to a device group.
   *
   * @remarks Needs `devices:write`. 404 when a device is unknown or outside the caller's reach.
   */
  @Post(':id/members')
  @Auth({ permission: 'devices:write', siteScope: true })
  addMembers(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: AddGroupMembersDto): Promise<DeviceGroupResponseDto> {
    return this.groups.addMembers(principal, id, dto);
  }

  /**
   * Removes one device from a device group.
   *
   * @remarks Needs `devices:write`. 404 when the device is not a member.
   */
  @Delete(':id/members/:deviceId')
  @Auth({ permission: 'devices:write', siteScope: true })
  removeMember(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('deviceId') deviceId: string): Promise<DeviceGroupResponseDto> {
    return this.groups.removeMember(principal, id, deviceId);
  }
}
