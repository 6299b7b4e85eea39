import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { CreateDeviceDto, DeviceEnrollmentDto, DeviceListDto, DeviceResponseDto, ListDevicesQueryDto, UpdateDeviceDto } from './device.dto';
import { DeviceService } from './device.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('devices')
@Controller('devices')
export class DeviceController {
  constructor(private readonly devices: DeviceService) {}

  /**
   * Lists devices, a page at a time.
   *
   * @remarks Needs `devices:read`. A site-restricted caller sees only the devices of their sites. Each device carries
   * when its agent was last seen and whether it is online; `agentStatus` filters on that.
   */
  @Get()
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListDevicesQueryDto): Promise<DeviceListDto> {
    return this.devices.list(principal, query);
  }

  /**
   * Reads one device.
   *
   * @remarks Needs `devices:read`. 404 for a device outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'devices:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DeviceResponseDto> {
    return this.devices.get(principal, id);
  }

  /**
   * Registers a device in a site.
   *
   * @remarks Needs `devices:write`. 404 when the site is unknown or not in the named organization. Enrol its agent
   * with `POST /devices/{id}/enroll`.
   */
  @Post()
  @Auth({ permission: 'devices:write', siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateDeviceDto): Promise<DeviceResponseDto> {
    return this.devices.create(principal, dto);
  }

  /**
   * Changes a device's hostname, site, OS type or status.
   *
   * @remarks Needs `devices:write`. Decommissioning revokes the device's agent. 404 when the new site is not in
   * the device's organization.
   */
  @Patch(':id')
  @Auth({ permission: 'devices:write', siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateDeviceDto): Promise<DeviceResponseDto> {
    return this.devices.update(principal, id, dto);
  }

  /**
   * Enrols the device's agent: answers a new one-time agent token.
   *
   * @remarks Needs `devices:write` and an MFA session. The token is shown once; the device's previous agent stops
   * working. 409 `device_decommissioned` for a decommissioned device.
   */
  @Post(':id/enroll')
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  @ApiErrors({ 409: ['device_decommissioned'] })
  enroll(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<DeviceEnrollmentDto> {
    return this.devices.enroll(principal, id);
  }
}
