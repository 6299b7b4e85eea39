import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SsoSuccessDto } from '../sso.dto';
import { ClaimSsoDomainDto, ListSsoDomainsQueryDto, SsoDomainListDto, SsoDomainResponseDto } from './sso-domain.dto';
import { SsoDomainService } from './sso-domain.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

const WRITE = { permission: 'organizations:write', mfa: true } as const;

@ApiTags('sso')
@Controller('sso/domains')
export class SsoDomainController {
  constructor(private readonly domains: SsoDomainService) {}

  /**
   * Lists an organization's claimed email domains and their DNS verification state.
   *
   * @remarks Needs `organizations:write`.
   */
  @Get()
  @Auth({ permission: 'organizations:write' })
  list(@Query() query: ListSsoDomainsQueryDto): Promise<SsoDomainListDto> {
    return this.domains.list(query);
  }

  /**
   * Claims an email domain for an organization; answers the TXT record to publish.
   *
   * @remarks Needs `organizations:write` and an MFA session. Publish `recordValue` as a TXT record at
   * `recordName`, then call `POST /sso/domains/{id}/verify`. 409 `domain_already_claimed` when the organization
   * already claimed it.
   */
  @Post()
  @Auth(WRITE)
  @ApiErrors({ 409: ['domain_already_claimed'] })
  claim(@CurrentPrincipal() principal: Principal, @Body() dto: ClaimSsoDomainDto): Promise<SsoDomainResponseDto> {
    return this.domains.claim(principal, dto);
  }

  /**
   * Checks the domain's TXT record in DNS and marks the domain verified when it is there.
   *
   * @remarks Needs `organizations:write` and an MFA session. 400 `domain_verification_failed` with `reason`
   * `record_missing` or `dns_unavailable`; a failed check never un-verifies a domain.
   */
  @Post(':id/verify')
  @HttpCode(200)
  @Auth(WRITE)
  @NoRequestTransaction() // a DNS lookup: no transaction is held around it
  @ApiErrors({ 400: ['domain_verification_failed'] })
  verify(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SsoDomainResponseDto> {
    return this.domains.verify(principal, id);
  }

  /**
   * Gives up a claimed domain.
   *
   * @remarks Needs `organizations:write` and an MFA session.
   */
  @Delete(':id')
  @Auth(WRITE)
  remove(@UuidParam() id: string): Promise<SsoSuccessDto> {
    return this.domains.remove(id);
  }
}
