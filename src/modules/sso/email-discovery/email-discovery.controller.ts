import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import { Public } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import { SsoDiscoveryDto, SsoDiscoveryResultDto } from './email-discovery.dto';
import { EmailDiscoveryService } from './email-discovery.service';

@ApiTags('auth')
@Controller('auth')
export class EmailDiscoveryController {
  constructor(private readonly discovery: EmailDiscoveryService) {}

  /**
   * Tells the login page whether an email address must sign in through SSO.
   *
   * @remarks Public. Decided from the email's domain alone: positive only when exactly one organization verified
   * the domain by DNS and its sign-in provider enforces SSO; otherwise `{ sso: null }`, which is also the answer
   * when the service cannot answer safely. Not cached. 429 past 20 calls per 5 minutes per address.
   */
  @Post('sso-discovery')
  @HttpCode(200)
  @Public()
  @NoRequestTransaction()
  @Throttle({ default: { limit: 20, ttl: 5 * 60_000 } })
  @Header('Cache-Control', 'no-store') // the answer follows DNS verification and provider changes at once
  discover(@Body() dto: SsoDiscoveryDto): Promise<SsoDiscoveryResultDto> {
    return this.discovery.discover(dto.email);
  }
}
