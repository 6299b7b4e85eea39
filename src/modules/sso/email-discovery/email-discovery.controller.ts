import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import { Public } from '../../../common/decorators/auth.decorator';
import { SsoDiscoveryDto, SsoDiscoveryResultDto } from './email-discovery.dto';
import { EmailDiscoveryService } from './email-discovery.service';

@ApiTags('auth')
@Controller('auth')
export class EmailDiscoveryController {
  constructor(private readonly discovery: EmailDiscoveryService) {}

  /** CONTRACT.md §3: 20 per 5 minutes per client IP; never cached (the answer follows DNS verification). */
  @Post('sso-discovery')
  @HttpCode(200)
  @Public({ transaction: 'none' })
  @Throttle({ default: { limit: 20, ttl: 5 * 60_000 } })
  @Header('Cache-Control', 'no-store')
  discover(@Body() dto: SsoDiscoveryDto): Promise<SsoDiscoveryResultDto> {
    return this.discovery.discover(dto.email);
  }
}
