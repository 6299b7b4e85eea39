import { Body, Controller, Get, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { OrganizationService } from './organization.service';
import { CreateOrganizationDto, OrganizationListDto, OrganizationResponseDto, UpdateOrganizationDto } from './organization.dto';
import { OneStatement } from '../../../common/decorators/one-statement.decorator';

@ApiTags('organizations')
@Controller('organizations')
export class OrganizationController {
  constructor(private readonly organizations: OrganizationService) {}

  /**
   * Lists the organizations the caller can reach.
   *
   * @remarks Needs `organizations:read`. A technician sees the partner's organizations they were granted; a
   * customer user their own.
   */
  @Get()
  @Auth({ permission: 'organizations:read' })
  @OneStatement()
  list(): Promise<OrganizationListDto> {
    return this.organizations.list();
  }

  /**
   * Reads one organization.
   *
   * @remarks Needs `organizations:read`. 404 for an organization outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'organizations:read' })
  get(@UuidParam() id: string): Promise<OrganizationResponseDto> {
    return this.organizations.get(id);
  }

  /**
   * Creates an organization (a customer) under the caller's partner.
   *
   * @remarks Needs `organizations:write` and a partner-scope session (403 `partner_scope_required`).
   */
  @Post()
  @Auth({ permission: 'organizations:write', partnerScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateOrganizationDto): Promise<OrganizationResponseDto> {
    return this.organizations.create(principal, dto);
  }

  /**
   * Renames an organization or changes its status.
   *
   * @remarks Needs `organizations:write`; an organization's own administrators may rename it. 404 for an
   * organization outside the caller's reach.
   */
  @Patch(':id')
  @Auth({ permission: 'organizations:write' })
  update(@UuidParam() id: string, @Body() dto: UpdateOrganizationDto): Promise<OrganizationResponseDto> {
    return this.organizations.update(id, dto);
  }
}
