import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { CreateDeviceDto, DeviceEnrollmentDto, DeviceListDto, DeviceResponseDto, ListDevicesQueryDto, UpdateDeviceDto } from './device.dto';
import { DeviceService } from './device.service';

@ApiTags('devices')
@Controller('devices')
export class DeviceController {
  constructor(private readonly devices: DeviceService) {}

  @Get()
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListDevicesQueryDto): Promise<DeviceListDto> {
    return this.devices.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'devices:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DeviceResponseDto> {
    return this.devices.get(principal, id);
  }

  @Post()
  @Auth({ permission: 'devices:write', siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateDeviceDto): Promise<DeviceResponseDto> {
    return this.devices.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'devices:write', siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateDeviceDto): Promise<DeviceResponseDto> {
    return this.devices.update(principal, id, dto);
  }

  /** Issues a new one-time agent token and revokes the device's previous agent. */
  @Post(':id/enroll')
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  enroll(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DeviceEnrollmentDto> {
    return this.devices.enroll(principal, id);
  }
}
