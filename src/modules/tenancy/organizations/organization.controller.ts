import { Body, Controller, Get, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { OrganizationService } from './organization.service';
import { CreateOrganizationDto, OrganizationListDto, OrganizationResponseDto, UpdateOrganizationDto } from './organization.dto';

@ApiTags('organizations')
@Controller('organizations')
export class OrganizationController {
  constructor(private readonly organizations: OrganizationService) {}

  @Get()
  @Auth({ permission: 'organizations:read' })
  list(): Promise<OrganizationListDto> {
    return this.organizations.list();
  }

  @Get(':id')
  @Auth({ permission: 'organizations:read' })
  get(@UuidParam() id: string): Promise<OrganizationResponseDto> {
    return this.organizations.get(id);
  }

  @Post()
  @Auth({ permission: 'organizations:write', partnerScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateOrganizationDto): Promise<OrganizationResponseDto> {
    return this.organizations.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'organizations:write' })
  update(@UuidParam() id: string, @Body() dto: UpdateOrganizationDto): Promise<OrganizationResponseDto> {
    return this.organizations.update(id, dto);
  }
}
