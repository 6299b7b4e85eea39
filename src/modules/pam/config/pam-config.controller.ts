import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { PamConfigQueryDto, PamConfigResponseDto, PutPamConfigDto } from './pam-config.dto';
import { PamConfigService } from './pam-config.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('pam')
@Controller('pam/config')
export class PamConfigController {
  constructor(private readonly config: PamConfigService) {}

  /**
   * Reads an organization's PAM defaults: the verdict for requests no rule decides, and the approval window.
   *
   * @remarks Needs `devices:read`. Without a stored configuration: `require_approval` and 15 minutes.
   */
  @Get()
  @Auth({ permission: 'devices:read' })
  get(@CurrentPrincipal() principal: Principal, @Query() query: PamConfigQueryDto): Promise<PamConfigResponseDto> {
    return this.config.get(principal, query);
  }

  /**
   * Sets an organization's PAM defaults.
   *
   * @remarks Needs `devices:write` and an MFA session. `defaultUnmatchedVerdict` `require_approval` or
   * `auto_deny`; `defaultApprovalDurationMinutes` 1–1440, unchanged when absent. 403 `site_access_denied` for a
   * site-restricted caller.
   */
  @Put()
  @Auth({ permission: 'devices:write', mfa: true })
  @ApiErrors({ 403: ['site_access_denied'] })
  put(@CurrentPrincipal() principal: Principal, @Body() dto: PutPamConfigDto): Promise<PamConfigResponseDto> {
    return this.config.put(principal, dto);
  }
}
