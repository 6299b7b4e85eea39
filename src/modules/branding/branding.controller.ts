import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import type { Principal } from '../../common/principal';
import { BrandingService } from './branding.service';
import { LoginBrandingResponseDto, ReplaceLoginBrandingDto } from './branding.dto';

@ApiTags('branding')
@Controller('partners/me/login-branding')
export class BrandingController {
  constructor(private readonly branding: BrandingService) {}

  @Get()
  @Auth({ partnerScope: true })
  get(@CurrentPrincipal() principal: Principal): Promise<LoginBrandingResponseDto> {
    return this.branding.get(principal);
  }

  /** Partner-wide policy rights (spec 4.1): policies:write, with MFA. */
  @Put()
  @Auth({ partnerScope: true, permission: 'policies:write', mfa: true })
  replace(@CurrentPrincipal() principal: Principal, @Body() dto: ReplaceLoginBrandingDto): Promise<LoginBrandingResponseDto> {
    return this.branding.replace(principal, dto);
  }
}
