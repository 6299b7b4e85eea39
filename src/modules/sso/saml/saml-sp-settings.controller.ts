import { Body, Controller, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';
import type { Principal } from '../../../common/principal';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { SamlSpSettingsService } from './saml-sp-settings.service';
import { SamlSpSettingsDto, UpdateSamlSpSettingsDto } from './saml.dto';

const WRITE = { permission: 'organizations:write', mfa: true } as const;

@ApiTags('sso')
@Controller('sso/saml/providers/:providerId')
export class SamlSpSettingsController {
  constructor(private readonly settings: SamlSpSettingsService) {}

  /**
   * The service-provider settings of a SAML provider: Single Logout, encrypted assertions, the SP keys.
   *
   * @remarks Any signed-in user who can see the provider; 404 otherwise (or for an OIDC provider).
   */
  @Get('sp-settings')
  @Auth()
  get(@UuidParam('providerId') providerId: string): Promise<SamlSpSettingsDto> {
    return this.settings.get(providerId);
  }

  /**
   * Sets the IdP's Single Logout URL and whether assertions must be encrypted.
   *
   * @remarks Needs `organizations:write` and an MFA session; a partner provider needs all-organization access.
   * 400 `invalid_endpoint` for a Single Logout URL that is not https.
   */
  @Put('sp-settings')
  @Auth(WRITE)
  @ApiErrors({ 400: ['invalid_endpoint'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam('providerId') providerId: string, @Body() dto: UpdateSamlSpSettingsDto): Promise<SamlSpSettingsDto> {
    return this.settings.update(principal, providerId, dto);
  }

  /**
   * Rotates the SP key: a new key signs and receives encrypted assertions; the previous one stays published,
   * and still decrypts, for 7 days.
   *
   * @remarks Needs `organizations:write` and an MFA session; a partner provider needs all-organization access.
   */
  @Post('sp-keys/rotate')
  @HttpCode(200)
  @Auth(WRITE)
  rotate(@CurrentPrincipal() principal: Principal, @UuidParam('providerId') providerId: string): Promise<SamlSpSettingsDto> {
    return this.settings.rotate(principal, providerId);
  }
}
