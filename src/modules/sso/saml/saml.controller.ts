import { Body, Controller, Get, Header, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Public } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { LoginStartRateGuard } from '../login/login-start-rate.guard';
import { STATE_COOKIE } from '../login/state-cookie.util';
import { AcsForm, SamlAcsService } from './saml-acs.service';
import { clearedSamlStateCookieOptions, samlStateCookieOptions } from './saml-cookie.util';
import { SamlLoginService, StartedSamlAttempt } from './saml-login.service';

// These routes open their own system-context transactions (refusals commit audit rows).
const OWN_TX = { transaction: 'none' } as const;
/** CONTRACT.md §3: 30 login starts per 5 minutes per client IP (the per-tenant limit is LoginStartRateGuard). */
const LOGIN_START_PER_IP = { default: { limit: 30, ttl: 5 * 60_000 } };

@ApiTags('sso')
@Controller('sso/saml')
export class SamlController {
  constructor(
    private readonly login: SamlLoginService,
    private readonly acs: SamlAcsService,
  ) {}

  /** SP metadata for the IdP administrator (spec 1.10); any provider status, SAML providers only. */
  @Get('metadata/:providerId')
  @Public(OWN_TX)
  @Header('Content-Type', 'application/samlmetadata+xml; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  metadata(@UuidParam('providerId') providerId: string): Promise<string> {
    return this.login.metadata(providerId);
  }

  /** Declared before login/:orgId so that `partner` is never read as an organization id. */
  @Get('login/partner/:partnerId')
  @Public(OWN_TX)
  @Throttle(LOGIN_START_PER_IP)
  @UseGuards(LoginStartRateGuard)
  async startPartner(@UuidParam('partnerId') partnerId: string, @Query('redirect') redirect: unknown, @Res() res: Response): Promise<void> {
    this.sendToIdp(res, await this.login.start({ partnerId }, redirect));
  }

  /** 302 to the IdP's SSO URL with a deflated AuthnRequest (HTTP-Redirect binding) and the state cookie. */
  @Get('login/:orgId')
  @Public(OWN_TX)
  @Throttle(LOGIN_START_PER_IP)
  @UseGuards(LoginStartRateGuard)
  async startOrganization(@UuidParam('orgId') orgId: string, @Query('redirect') redirect: unknown, @Res() res: Response): Promise<void> {
    this.sendToIdp(res, await this.login.start({ orgId }, redirect));
  }

  /** HTTP-POST binding; always a 302, to `<path>#ssoCode=…` or to /login?error=<code>. */
  @Post('acs')
  @Public(OWN_TX)
  async consume(@Body() form: AcsForm, @Req() req: Request, @Res() res: Response): Promise<void> {
    const result = await this.acs.handle(form ?? {}, req.cookies?.[STATE_COOKIE]);
    if (result.clearStateCookie) res.clearCookie(STATE_COOKIE, clearedSamlStateCookieOptions(this.login.secureCookies));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, result.location);
  }

  private sendToIdp(res: Response, started: StartedSamlAttempt): void {
    res.cookie(STATE_COOKIE, started.stateCookie, samlStateCookieOptions(this.login.secureCookies));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, started.authUrl);
  }
}
