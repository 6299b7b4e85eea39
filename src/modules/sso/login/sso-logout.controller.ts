import { Body, Controller, Get, Header, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiConsumes, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Auth, CurrentPrincipal, Public } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import { ApiErrors, ApiRedirect } from '../../../common/decorators/api-errors.decorator';
import type { Principal } from '../../../common/principal';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { BackchannelLogoutFormDto, BackchannelLogoutResultDto, SsoLogoutDto, SsoLogoutStartedDto } from './sso-login.dto';
import { SsoIdpLogoutService } from './sso-idp-logout.service';
import { SsoLogoutService } from './sso-logout.service';

@ApiTags('sso')
// These routes open their own system-context transactions (and may call the IdP's metadata).
@NoRequestTransaction()
@Controller('sso/logout')
export class SsoLogoutController {
  constructor(
    private readonly logouts: SsoLogoutService,
    private readonly idpLogouts: SsoIdpLogoutService,
  ) {}

  /**
   * Signs out, and answers where the browser goes to be signed out at the identity provider too.
   *
   * @remarks Any signed-in user session. Ends the caller's session and its refresh tokens at once (every
   * instance within the principal cache's TTL). For a session an OIDC provider opened, `logoutUrl` is the
   * provider's end-session endpoint with `id_token_hint` and `post_logout_redirect_uri`
   * (`/api/v1/sso/logout/callback`, which returns the browser to `redirect`); for a SAML session of a provider
   * with a Single Logout service, the signed LogoutRequest; otherwise `redirect` itself (default `/login`).
   * 403 for a credential that is not a user session (an API key).
   */
  @Post()
  @HttpCode(200)
  @Auth()
  @ApiErrors({ 403: ['forbidden'] })
  logout(@CurrentPrincipal() principal: Principal, @Body() dto: SsoLogoutDto): Promise<SsoLogoutStartedDto> {
    return this.logouts.logout(principal, dto.redirect);
  }

  /**
   * Where the identity provider returns the browser after signing it out; always redirects (302).
   *
   * @remarks Public, for the identity provider's redirect only. The `state` is the return path the sign-out
   * named, read again as a same-origin path (anything else is `/`).
   */
  @Get('callback')
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiRedirect('to the path the sign-out named')
  @ApiQuery({ name: 'state', required: false, description: 'The return path the sign-out sent to the identity provider.', schema: { type: 'string' } })
  returned(@Query('state') state: unknown, @Res() res: Response): void {
    res.redirect(302, this.logouts.returnLocation(state));
  }

  /**
   * OpenID Connect Back-Channel Logout 1.0: the identity provider ends sessions it opened.
   *
   * @remarks Public, for the identity provider (register `{PUBLIC_URL}/api/v1/sso/logout/backchannel/{providerId}`
   * as its `backchannel_logout_uri`). The form's `logout_token` must be signed by the provider's keys, name it
   * as issuer and its client id as audience, be issued within 5 minutes, carry a `jti` not seen before, the
   * back-channel logout event, `sid` or `sub` and no `nonce`; then every session of that IdP session (`sid`)
   * or subject (`sub`) ends with its refresh tokens. 400 `invalid_logout_token` otherwise (the reason is in the
   * audit trail); 404 for an unknown or SAML provider.
   */
  @Post('backchannel/:providerId')
  @HttpCode(200)
  @Public()
  @Header('Cache-Control', 'no-store')
  @Throttle({ default: { limit: 600, ttl: 60_000 } })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiErrors({ 400: ['invalid_logout_token'] })
  backchannel(@UuidParam('providerId') providerId: string, @Body() form: BackchannelLogoutFormDto): Promise<BackchannelLogoutResultDto> {
    return this.idpLogouts.backchannel(providerId, form.logout_token);
  }
}
