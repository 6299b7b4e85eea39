import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SsoSuccessDto } from '../providers/sso-provider.dto';
import { ClaimSsoDomainDto, ListSsoDomainsQueryDto, SsoDomainListDto, SsoDomainResponseDto } from './sso-domain.dto';
import { SsoDomainService } from './sso-domain.service';

const WRITE = { permission: 'organizations:write', mfa: true } as const;

@ApiTags('sso')
@Controller('sso/domains')
export class SsoDomainController {
  constructor(private readonly domains: SsoDomainService) {}

  @Get()
  @Auth({ permission: 'organizations:write' })
  list(@Query() query: ListSsoDomainsQueryDto): Promise<SsoDomainListDto> {
    return this.domains.list(query);
  }

  @Post()
  @Auth(WRITE)
  claim(@CurrentPrincipal() principal: Principal, @Body() dto: ClaimSsoDomainDto): Promise<SsoDomainResponseDto> {
    return this.domains.claim(principal, dto);
  }

  /** Looks the TXT record up in DNS, so no transaction is held around the handler. */
  @Post(':id/verify')
  @HttpCode(200)
  @Auth({ ...WRITE, transaction: 'none' })
  verify(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SsoDomainResponseDto> {
    return this.domains.verify(principal, id);
  }

  @Delete(':id')
  @Auth(WRITE)
  remove(@UuidParam() id: string): Promise<SsoSuccessDto> {
    return this.domains.remove(id);
  }
}
