import { Controller, Get, HttpCode, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { STATE_COOKIE, stateCookieOptions } from '../login/state-cookie.util';
import { LinkOptionsDto, LinkStartDto } from './sso-link.dto';
import { SsoLinkService } from './sso-link.service';

@ApiTags('sso')
@Controller('sso/link')
export class SsoLinkController {
  constructor(private readonly links: SsoLinkService) {}

  @Get('options')
  @Auth()
  options(@CurrentPrincipal() principal: Principal): Promise<LinkOptionsDto> {
    return this.links.options(principal);
  }

  /** Re-validates the provider's endpoints over the network, hence its own transactions. */
  @Post('start/:providerId')
  @HttpCode(200)
  @Auth({ mfa: true, transaction: 'none' })
  @Throttle({ default: { limit: 30, ttl: 5 * 60_000 } })
  async start(@CurrentPrincipal() principal: Principal, @UuidParam('providerId') providerId: string, @Res({ passthrough: true }) res: Response): Promise<LinkStartDto> {
    const started = await this.links.start(principal, providerId);
    res.cookie(STATE_COOKIE, started.stateCookie, stateCookieOptions(this.links.secureCookies));
    return { authUrl: started.authUrl };
  }
}
