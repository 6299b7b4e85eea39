import { Body, Controller, Delete, Get, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { ApiKeyCreatedDto, ApiKeyListDto, ApiKeyResponseDto, CreateApiKeyDto, ListApiKeysQueryDto } from './api-key.dto';
import { ApiKeyService } from './api-key.service';

@ApiTags('api-keys')
@Controller('api-keys')
export class ApiKeyController {
  constructor(private readonly keys: ApiKeyService) {}

  /**
   * Lists the API keys of the caller's organizations and partner: metadata only, never the secret.
   *
   * @remarks Needs `organizations:write`. Partner-wide keys are listed only to technicians who reach every organization of the partner.
   */
  @Get()
  @Auth({ permission: 'organizations:write' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListApiKeysQueryDto): Promise<ApiKeyListDto> {
    return this.keys.list(principal, query);
  }

  /**
   * Creates an API key bound to one organization (or partner-wide) and returns its secret `sk_…` once.
   *
   * @remarks A signed-in person with MFA and `organizations:write`; the key acts for that person, carries at most their permissions and stops working when they lose them or are disabled. `mfaSatisfied: true` lets the key pass MFA-gated routes. Errors: 403 `privilege_escalation` (permissions beyond the caller's, or a partner-wide key from a technician limited to selected organizations), 403 `site_access_denied` (site-restricted caller).
   */
  @Post()
  @Auth({ permission: 'organizations:write', mfa: true })
  @ApiErrors({ 403: ['privilege_escalation', 'site_access_denied'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateApiKeyDto): Promise<ApiKeyCreatedDto> {
    return this.keys.create(principal, dto);
  }

  /**
   * Revokes an API key at once; revoking it again changes nothing.
   *
   * @remarks Needs `organizations:write` and MFA. Revoking a key another person created acts on that person: it needs authority over everything they hold in the key's organization or partner (403 `person_out_of_reach`). A key of another tenant, or a partner-wide key seen by a technician limited to selected organizations, answers 404.
   */
  @Delete(':id')
  @ApiErrors({ 403: ['person_out_of_reach'] })
  @Auth({ permission: 'organizations:write', mfa: true })
  revoke(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ApiKeyResponseDto> {
    return this.keys.revoke(principal, id);
  }
}
