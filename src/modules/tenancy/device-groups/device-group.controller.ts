import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../shared/pagination.dto';
import {
  AddGroupMembersDto,
  CreateDeviceGroupDto,
  DeviceGroupListDto,
  DeviceGroupResponseDto,
  ListDeviceGroupsQueryDto,
  UpdateDeviceGroupDto,
} from './device-group.dto';
import { DeviceGroupService } from './device-group.service';

@ApiTags('device-groups')
@Controller('device-groups')
export class DeviceGroupController {
  constructor(private readonly groups: DeviceGroupService) {}

  @Get()
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListDeviceGroupsQueryDto): Promise<DeviceGroupListDto> {
    return this.groups.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'devices:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DeviceGroupResponseDto> {
    return this.groups.get(principal, id);
  }

  @Post()
  @Auth({ permission: 'devices:write', siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateDeviceGroupDto): Promise<DeviceGroupResponseDto> {
    return this.groups.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'devices:write', siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateDeviceGroupDto): Promise<DeviceGroupResponseDto> {
    return this.groups.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'devices:write', siteScope: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.groups.delete(principal, id);
  }

  @Post(':id/members')
  @Auth({ permission: 'devices:write', siteScope: true })
  addMembers(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: AddGroupMembersDto): Promise<DeviceGroupResponseDto> {
    return this.groups.addMembers(principal, id, dto);
  }

  @Delete(':id/members/:deviceId')
  @Auth({ permission: 'devices:write', siteScope: true })
  removeMember(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('deviceId') deviceId: string): Promise<DeviceGroupResponseDto> {
    return this.groups.removeMember(principal, id, deviceId);
  }
}
