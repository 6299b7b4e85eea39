import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../tenancy/shared/pagination.dto';
import { CreateCustomFieldDto, CustomFieldListDto, CustomFieldResponseDto, ListCustomFieldsQueryDto, UpdateCustomFieldDto } from './custom-field.dto';
import { CustomFieldService } from './custom-field.service';

@ApiTags('custom-fields')
@Controller('custom-fields')
export class CustomFieldController {
  constructor(private readonly fields: CustomFieldService) {}

  @Get()
  @Auth({ permission: 'custom-fields:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListCustomFieldsQueryDto): Promise<CustomFieldListDto> {
    return this.fields.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'custom-fields:read' })
  get(@UuidParam() id: string): Promise<CustomFieldResponseDto> {
    return this.fields.get(id);
  }

  @Post()
  @Auth({ permission: 'custom-fields:write' })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateCustomFieldDto): Promise<CustomFieldResponseDto> {
    return this.fields.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'custom-fields:write' })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateCustomFieldDto): Promise<CustomFieldResponseDto> {
    return this.fields.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'custom-fields:write' })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.fields.delete(principal, id);
  }
}
