import { Body, Controller, Get, HttpCode, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Public } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { TokenPairDto } from '../../auth/dto/auth.dto';
import { LoginStartRateGuard } from './login-start-rate.guard';
import type { StartedAttempt } from './oidc-login-starter.service';
import { CallbackQuery, SsoCallbackService } from './sso-callback.service';
import { SsoExchangeService } from './sso-exchange.service';
import { SsoExchangeDto } from './sso-login.dto';
import { SsoLoginService } from './sso-login.service';
import { clearedStateCookieOptions, STATE_COOKIE, stateCookieOptions } from './state-cookie.util';

// These routes call the IdP or open their own system-context transactions (refusals commit audit rows).
const OWN_TX = { transaction: 'none' } as const;
/** CONTRACT.md §3: 30 login starts per 5 minutes per client IP (the per-tenant limit is LoginStartRateGuard). */
const LOGIN_START_PER_IP = { default: { limit: 30, ttl: 5 * 60_000 } };

@ApiTags('sso')
@Controller('sso')
export class SsoLoginController {
  constructor(
    private readonly login: SsoLoginService,
    private readonly callbacks: SsoCallbackService,
    private readonly exchanges: SsoExchangeService,
  ) {}

  /** Spec 1.6.3: sign-in of the partner's technicians through its oldest active provider. */
  @Get('login/partner/:partnerId')
  @Public(OWN_TX)
  @Throttle(LOGIN_START_PER_IP)
  @UseGuards(LoginStartRateGuard)
  async startPartner(@UuidParam('partnerId') partnerId: string, @Query('redirect') redirect: unknown, @Res() res: Response): Promise<void> {
    this.sendToIdp(res, await this.login.start({ partnerId }, redirect));
  }

  /** Spec 1.1.2–4: 302 to the IdP of the organization's oldest active provider, with the state cookie. */
  @Get('login/:orgId')
  @Public(OWN_TX)
  @Throttle(LOGIN_START_PER_IP)
  @UseGuards(LoginStartRateGuard)
  async startOrganization(@UuidParam('orgId') orgId: string, @Query('redirect') redirect: unknown, @Res() res: Response): Promise<void> {
    this.sendToIdp(res, await this.login.start({ orgId }, redirect));
  }

  /** Spec 1.1.6–15: always a 302, to `<path>#ssoCode=…` or to /login?error=<code>. */
  @Get('callback')
  @Public(OWN_TX)
  async callback(@Query() query: CallbackQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    const result = await this.callbacks.handle(query, req.cookies?.[STATE_COOKIE]);
    if (result.clearStateCookie) res.clearCookie(STATE_COOKIE, clearedStateCookieOptions(this.login.secureCookies));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, result.location);
  }

  @Post('exchange')
  @HttpCode(200)
  @Public(OWN_TX)
  @Throttle({ default: { limit: 30, ttl: 60_000 } })
  exchange(@Body() dto: SsoExchangeDto): Promise<TokenPairDto> {
    return this.exchanges.redeem(dto.code);
  }

  private sendToIdp(res: Response, started: StartedAttempt): void {
    res.cookie(STATE_COOKIE, started.stateCookie, stateCookieOptions(this.login.secureCookies));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, started.authUrl);
  }
}
