import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { CreateCustomFieldDto, CustomFieldListDto, CustomFieldResponseDto, ListCustomFieldsQueryDto, UpdateCustomFieldDto } from './custom-field.dto';
import { CustomFieldService } from './custom-field.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('custom-fields')
@Controller('custom-fields')
export class CustomFieldController {
  constructor(private readonly fields: CustomFieldService) {}

  /**
   * Lists custom-field definitions, or with `orgId` those that apply to that organization.
   *
   * @remarks Needs `custom-fields:read`.
   */
  @Get()
  @Auth({ permission: 'custom-fields:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListCustomFieldsQueryDto): Promise<CustomFieldListDto> {
    return this.fields.list(principal, query);
  }

  /**
   * Reads one custom-field definition.
   *
   * @remarks Needs `custom-fields:read`.
   */
  @Get(':id')
  @Auth({ permission: 'custom-fields:read' })
  get(@UuidParam() id: string): Promise<CustomFieldResponseDto> {
    return this.fields.get(id);
  }

  /**
   * Defines a custom field for device values, partner-wide or for one organization.
   *
   * @remarks Needs `custom-fields:write`; a partner-wide field needs a partner-scope session of a technician who
   * reaches every organization. 409 `key_taken` for a key the organization already sees.
   */
  @Post()
  @Auth({ permission: 'custom-fields:write' })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['key_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateCustomFieldDto): Promise<CustomFieldResponseDto> {
    return this.fields.create(principal, dto);
  }

  /**
   * Changes a custom field's name, description, options or validation.
   *
   * @remarks Needs `custom-fields:write`. 409 `option_in_use` when removing options that device values still use.
   */
  @Patch(':id')
  @Auth({ permission: 'custom-fields:write' })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['option_in_use'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateCustomFieldDto): Promise<CustomFieldResponseDto> {
    return this.fields.update(principal, id, dto);
  }

  /**
   * Deletes a custom field with its values.
   *
   * @remarks Needs `custom-fields:write`. 409 `custom_field_in_use` while a dynamic device group filters on it.
   */
  @Delete(':id')
  @Auth({ permission: 'custom-fields:write' })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['custom_field_in_use'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.fields.delete(principal, id);
  }
}
