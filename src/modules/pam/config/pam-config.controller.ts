import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import type { Principal } from '../../../common/principal';
import { PamConfigQueryDto, PamConfigResponseDto, PutPamConfigDto } from './pam-config.dto';
import { PamConfigService } from './pam-config.service';

@ApiTags('pam')
@Controller('pam/config')
export class PamConfigController {
  constructor(private readonly config: PamConfigService) {}

  @Get()
  @Auth({ permission: 'devices:read' })
  get(@CurrentPrincipal() principal: Principal, @Query() query: PamConfigQueryDto): Promise<PamConfigResponseDto> {
    return this.config.get(principal, query);
  }

  @Put()
  @Auth({ permission: 'devices:write', mfa: true })
  put(@CurrentPrincipal() principal: Principal, @Body() dto: PutPamConfigDto): Promise<PamConfigResponseDto> {
    return this.config.put(principal, dto);
  }
}
