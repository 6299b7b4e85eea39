import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { SsoCheckDto } from './sso-provider.dto';
import { SsoCheckService } from './sso-check.service';

@ApiTags('sso')
@Controller('sso')
export class SsoCheckController {
  constructor(private readonly checks: SsoCheckService) {}

  /**
   * Whether an organization signs in through SSO, and where its sign-in starts.
   *
   * @remarks Public. `{ ssoEnabled: false }` when the organization has no active provider, also when it does not
   * exist or is suspended; otherwise the oldest active provider, whether it enforces SSO, and its `loginUrl`.
   */
  @Get('check/:orgId')
  @Public()
  check(@UuidParam('orgId') orgId: string): Promise<SsoCheckDto> {
    return this.checks.check(orgId);
  }
}
