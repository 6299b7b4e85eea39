import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../shared/pagination.dto';
import { CreateSiteDto, ListSitesQueryDto, SiteListDto, SiteResponseDto, UpdateSiteDto } from './site.dto';
import { SiteService } from './site.service';

@ApiTags('sites')
@Controller('sites')
export class SiteController {
  constructor(private readonly sites: SiteService) {}

  @Get()
  @Auth({ permission: 'organizations:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSitesQueryDto): Promise<SiteListDto> {
    return this.sites.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'organizations:read', siteScope: true })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SiteResponseDto> {
    return this.sites.get(principal, id);
  }

  @Post()
  @Auth({ permission: 'organizations:write', siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSiteDto): Promise<SiteResponseDto> {
    return this.sites.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'organizations:write', siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateSiteDto): Promise<SiteResponseDto> {
    return this.sites.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'organizations:write', siteScope: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.sites.delete(principal, id);
  }
}
