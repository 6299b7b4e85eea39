import { Body, Controller, Delete, Get, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { CustomFieldValueService } from './custom-field-value.service';
import { DeviceCustomFieldValueResponseDto, DeviceCustomFieldValuesDto, SetCustomFieldValueDto } from './custom-field.dto';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('custom-fields')
@Controller('devices/:deviceId/custom-fields')
export class DeviceCustomFieldController {
  constructor(private readonly values: CustomFieldValueService) {}

  /**
   * Lists a device's custom-field values.
   *
   * @remarks Needs `custom-fields:read`.
   */
  @Get()
  @Auth({ permission: 'custom-fields:read' })
  list(@CurrentPrincipal() principal: Principal, @UuidParam('deviceId') deviceId: string): Promise<DeviceCustomFieldValuesDto> {
    return this.values.list(principal, deviceId);
  }

  /**
   * Sets a device's value of one custom field.
   *
   * @remarks Needs `custom-fields:write`. The value is checked against the field's type and validation. 400
   * `custom_field_not_applicable` when the field does not apply to the device's organization.
   */
  @Put(':definitionId')
  @Auth({ permission: 'custom-fields:write' })
  @ApiErrors({ 400: ['custom_field_not_applicable'] })
  set(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('deviceId') deviceId: string,
    @UuidParam('definitionId') definitionId: string,
    @Body() dto: SetCustomFieldValueDto,
  ): Promise<DeviceCustomFieldValueResponseDto> {
    return this.values.set(principal, deviceId, definitionId, dto.value);
  }

  /**
   * Clears a device's value of one custom field.
   *
   * @remarks Needs `custom-fields:write`.
   */
  @Delete(':definitionId')
  @Auth({ permission: 'custom-fields:write' })
  clear(@CurrentPrincipal() principal: Principal, @UuidParam('deviceId') deviceId: string, @UuidParam('definitionId') definitionId: string): Promise<SuccessDto> {
    return this.values.clear(principal, deviceId, definitionId);
  }
}
