import { Controller, Get, Header } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import { Public } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import { LoginContextService } from './login-context.service';
import { LoginContextDto } from './sso-login.dto';

@ApiTags('auth')
@Controller('auth')
export class LoginContextController {
  constructor(private readonly loginContext: LoginContextService) {}

  /**
   * What the login page shows before sign-in: the partner's branding and SSO button.
   *
   * @remarks Public; both are null on a hosted deployment or one with several partners. Cacheable for 60 seconds.
   * 429 past 30 calls per minute per address.
   */
  @Get('login-context')
  @Public()
  @NoRequestTransaction()
  @Throttle({ default: { limit: 30, ttl: 60_000 } })
  @Header('Cache-Control', 'public, max-age=60')
  context(): Promise<LoginContextDto> {
    return this.loginContext.context();
  }
}
