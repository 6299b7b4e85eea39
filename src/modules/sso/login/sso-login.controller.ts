import { Body, Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { ApiQuery, ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Public } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import type { TokenPairDto } from '../../auth/dto/auth.dto';
import { CallbackQuery, SsoCallbackService } from './sso-callback.service';
import { SsoExchangeService } from './sso-exchange.service';
import { SsoExchangeDto } from './sso-login.dto';
import { SsoLoginService } from './sso-login.service';
import { clearedStateCookieOptions, STATE_COOKIE } from './state-cookie.util';
import { ApiErrors, ApiRedirect } from '../../../common/decorators/api-errors.decorator';
import type { StartProtocol } from '../sign-in/login-start.decorator';
import { redirectSignedIn } from '../sign-in/sign-in-response.util';
import { SignInStartRoutes } from '../sign-in/sign-in-start.mixin';

/** The OIDC start routes (`login/partner/:partnerId`, `login/:orgId`): only for an OIDC provider. */
const OIDC_START: StartProtocol = { name: 'OIDC', request: 'an authorization request (authorization code flow, S256 PKCE)', other: 'SAML' };

@ApiTags('sso')
// These routes call the IdP or open their own system-context transactions (refusals commit audit rows).
@NoRequestTransaction()
@Controller('sso')
export class SsoLoginController extends SignInStartRoutes(OIDC_START) {
  constructor(
    private readonly login: SsoLoginService,
    private readonly callbacks: SsoCallbackService,
    private readonly exchanges: SsoExchangeService,
  ) {
    super(login);
  }

  /**
   * Where the identity provider returns the browser after an OIDC sign-in; always redirects (302).
   *
   * @remarks Public, for the identity provider's redirect only. On success the browser goes back to the page it
   * started from with a one-time exchange code in the fragment (`#ssoCode=…`), to trade at `POST /sso/exchange`;
   * on failure to `/login?error=<code>` (codes in docs/sso-login.md). A linking round trip returns to the profile
   * page instead.
   */
  @Get('callback')
  @Public()
  @ApiRedirect('back to the page the sign-in started from (`#ssoCode=…`), or to `/login?error=<code>`')
  @ApiQuery({ name: 'code', required: false, description: "The identity provider's authorization code.", schema: { type: 'string' } })
  @ApiQuery({ name: 'state', required: false, description: 'The state this service sent with the sign-in.', schema: { type: 'string' } })
  @ApiQuery({ name: 'error', required: false, description: "The identity provider's error, when it refused.", schema: { type: 'string' } })
  @ApiQuery({ name: 'iss', required: false, description: 'RFC 9207: the issuer of the answer; required when the provider advertises it.', schema: { type: 'string' } })
  async callback(@Query() query: CallbackQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    redirectSignedIn(res, await this.callbacks.handle(query, req.cookies?.[STATE_COOKIE]), clearedStateCookieOptions(this.login.secureCookies));
  }

  /**
   * Trades the one-time code of an SSO sign-in for the token pair.
   *
   * @remarks Public. The code works once, within 2 minutes: else 400 `invalid_exchange_code`. 429 past 30 calls
   * per minute per address.
   */
  @Post('exchange')
  @HttpCode(200)
  @Public()
  @Throttle({ default: { limit: 30, ttl: 60_000 } })
  @ApiErrors({ 400: ['invalid_exchange_code'] })
  exchange(@Body() dto: SsoExchangeDto): Promise<TokenPairDto> {
    return this.exchanges.redeem(dto.code);
  }
}
