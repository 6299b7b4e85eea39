import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { CreateSiteDto, ListSitesQueryDto, SiteListDto, SiteResponseDto, UpdateSiteDto } from './site.dto';
import { SiteService } from './site.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('sites')
@Controller('sites')
export class SiteController {
  constructor(private readonly sites: SiteService) {}

  /**
   * Lists the sites of the organizations the caller can reach.
   *
   * @remarks Needs `organizations:read`. A site-restricted caller sees only their sites.
   */
  @Get()
  @Auth({ permission: 'organizations:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSitesQueryDto): Promise<SiteListDto> {
    return this.sites.list(principal, query);
  }

  /**
   * Reads one site.
   *
   * @remarks Needs `organizations:read`. 404 for a site outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'organizations:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SiteResponseDto> {
    return this.sites.get(principal, id);
  }

  /**
   * Creates a site in an organization.
   *
   * @remarks Needs `organizations:write`. A partner-scope caller names the organization (`orgId`). 409
   * `name_taken` when the organization already has a site of that name.
   */
  @Post()
  @Auth({ permission: 'organizations:write', siteScope: true })
  @ApiErrors({ 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSiteDto): Promise<SiteResponseDto> {
    return this.sites.create(principal, dto);
  }

  /**
   * Renames a site or changes its time zone.
   *
   * @remarks Needs `organizations:write`. 409 `name_taken` for a name already used in the organization.
   */
  @Patch(':id')
  @Auth({ permission: 'organizations:write', siteScope: true })
  @ApiErrors({ 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateSiteDto): Promise<SiteResponseDto> {
    return this.sites.update(principal, id, dto);
  }

  /**
   * Deletes a site that has no devices.
   *
   * @remarks Needs `organizations:write`. 409 `site_in_use` while devices remain in it: move or decommission them
   * first.
   */
  @Delete(':id')
  @Auth({ permission: 'organizations:write', siteScope: true })
  @ApiErrors({ 409: ['site_in_use'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.sites.delete(principal, id);
  }
}
