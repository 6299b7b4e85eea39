import { Controller, Get, HttpCode, Post, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import type { Principal } from '../../../common/principal';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { STATE_COOKIE } from '../login/state-cookie.util';
import { LinkOptionsDto, LinkStartDto } from './sso-link.dto';
import { SsoLinkService } from './sso-link.service';

@ApiTags('sso')
@Controller('sso/link')
export class SsoLinkController {
  constructor(private readonly links: SsoLinkService) {}

  /**
   * Lists the SSO providers the signed-in user can link an identity with, and which are linked.
   *
   * @remarks Any signed-in user.
   */
  @Get('options')
  @Auth()
  options(@CurrentPrincipal() principal: Principal): Promise<LinkOptionsDto> {
    return this.links.options(principal);
  }

  /**
   * Starts linking an identity-provider account to the signed-in user: answers the `authUrl` to open.
   *
   * @remarks Needs a person's MFA session. Sets the `svc_sso_state` cookie; the browser then goes to `authUrl`,
   * and the round trip ends on `/settings/profile?ssoLinked=1` or `?ssoLinkError=<code>`. 404 for a provider the
   * user cannot link with; 429 past 30 starts per 5 minutes per address.
   */
  @Post('start/:providerId')
  @HttpCode(200)
  @Auth({ mfa: true })
  @NoRequestTransaction() // re-validates the provider's endpoints over the network
  @Throttle({ default: { limit: 30, ttl: 5 * 60_000 } })
  async start(@CurrentPrincipal() principal: Principal, @UuidParam('providerId') providerId: string, @Res({ passthrough: true }) res: Response): Promise<LinkStartDto> {
    const started = await this.links.start(principal, providerId);
    res.cookie(STATE_COOKIE, started.stateCookie, started.cookie);
    return { authUrl: started.authUrl };
  }
}
