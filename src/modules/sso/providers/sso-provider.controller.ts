import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import {
  CreateSsoProviderDto,
  ListSsoProvidersQueryDto,
  SetSsoProviderStatusDto,
  SsoPresetListDto,
  SsoProviderListDto,
  SsoProviderResponseDto,
  SsoProviderTestDto,
  SsoSuccessDto,
  UpdateSsoProviderDto,
} from './sso-provider.dto';
import { SsoProviderService } from './sso-provider.service';

const WRITE = { permission: 'organizations:write', mfa: true } as const;

@ApiTags('sso')
@Controller('sso')
export class SsoProviderController {
  constructor(private readonly providers: SsoProviderService) {}

  @Get('presets')
  @Auth()
  presets(): Promise<SsoPresetListDto> {
    return this.providers.presets();
  }

  @Get('providers')
  @Auth()
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSsoProvidersQueryDto): Promise<SsoProviderListDto> {
    return this.providers.list(principal, query);
  }

  @Get('providers/:id')
  @Auth()
  get(@UuidParam() id: string): Promise<SsoProviderResponseDto> {
    return this.providers.get(id);
  }

  /** Runs OIDC discovery, so no transaction is held around the handler. */
  @Post('providers')
  @Auth({ ...WRITE, transaction: 'none' })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSsoProviderDto): Promise<SsoProviderResponseDto> {
    return this.providers.create(principal, dto);
  }

  @Patch('providers/:id')
  @Auth({ ...WRITE, transaction: 'none' })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateSsoProviderDto): Promise<SsoProviderResponseDto> {
    return this.providers.update(principal, id, dto);
  }

  @Delete('providers/:id')
  @Auth(WRITE)
  remove(@UuidParam() id: string): Promise<SsoSuccessDto> {
    return this.providers.remove(id);
  }

  @Post('providers/:id/status')
  @HttpCode(200)
  @Auth(WRITE)
  setStatus(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: SetSsoProviderStatusDto): Promise<SsoProviderResponseDto> {
    return this.providers.setStatus(id, dto.status, principal);
  }

  @Post('providers/:id/test')
  @HttpCode(200)
  @Auth({ ...WRITE, transaction: 'none' })
  test(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SsoProviderTestDto> {
    return this.providers.test(principal, id);
  }
}
