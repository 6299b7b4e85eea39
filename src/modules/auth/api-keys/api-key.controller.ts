import { Body, Controller, Delete, Get, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { ApiKeyCreatedDto, ApiKeyListDto, ApiKeyResponseDto, CreateApiKeyDto, ListApiKeysQueryDto } from './api-key.dto';
import { ApiKeyService } from './api-key.service';

@ApiTags('api-keys')
@Controller('api-keys')
export class ApiKeyController {
  constructor(private readonly keys: ApiKeyService) {}

  /** Key metadata only: never the secret or its hash. */
  @Get()
  @Auth({ permission: 'organizations:write' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListApiKeysQueryDto): Promise<ApiKeyListDto> {
    return this.keys.list(principal, query);
  }

  /** Returns the secret `sk_…` once. */
  @Post()
  @Auth({ permission: 'organizations:write', mfa: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateApiKeyDto): Promise<ApiKeyCreatedDto> {
    return this.keys.create(principal, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'organizations:write', mfa: true })
  revoke(@UuidParam() id: string): Promise<ApiKeyResponseDto> {
    return this.keys.revoke(id);
  }
}
