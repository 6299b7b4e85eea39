import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import type { Principal } from '../../common/principal';
import { BrandingService } from './branding.service';
import { LoginBrandingResponseDto, ReplaceLoginBrandingDto } from './branding.dto';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';

@ApiTags('branding')
@Controller('partners/me/login-branding')
export class BrandingController {
  constructor(private readonly branding: BrandingService) {}

  /**
   * Reads the login-page branding of the caller's partner.
   *
   * @remarks A partner-scope session (403 `partner_scope_required`). Each of `logoUrl`, `accentColor` and
   * `headline` may be null.
   */
  @Get()
  @Auth({ partnerScope: true })
  @ApiErrors({ 403: ['partner_scope_required'] })
  get(@CurrentPrincipal() principal: Principal): Promise<LoginBrandingResponseDto> {
    return this.branding.get(principal);
  }

  /**
   * Replaces the login-page branding of the caller's partner; omitted fields are cleared.
   *
   * @remarks Needs a partner-scope session, `policies:write` and an MFA session. The logo is an HTTPS URL or a
   * data URI of a PNG, JPEG or WebP image; the accent colour `#rrggbb`; the headline up to 120 characters.
   */
  @Put()
  @Auth({ partnerScope: true, permission: 'policies:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'] })
  replace(@CurrentPrincipal() principal: Principal, @Body() dto: ReplaceLoginBrandingDto): Promise<LoginBrandingResponseDto> {
    return this.branding.replace(principal, dto);
  }
}
