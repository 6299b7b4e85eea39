import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../tenancy/shared/pagination.dto';
import { CreateScriptDto, ListScriptsQueryDto, ScriptListDto, ScriptResponseDto, UpdateScriptDto } from './script.dto';
import { ScriptService } from './script.service';

/** Script writes need MFA: scripts run on endpoints, by default as SYSTEM. */
@ApiTags('scripts')
@Controller('scripts')
export class ScriptController {
  constructor(private readonly scripts: ScriptService) {}

  @Get()
  @Auth({ permission: 'scripts:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListScriptsQueryDto): Promise<ScriptListDto> {
    return this.scripts.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'scripts:read' })
  get(@UuidParam() id: string): Promise<ScriptResponseDto> {
    return this.scripts.get(id);
  }

  @Post()
  @Auth({ permission: 'scripts:write', mfa: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateScriptDto): Promise<ScriptResponseDto> {
    return this.scripts.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'scripts:write', mfa: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateScriptDto): Promise<ScriptResponseDto> {
    return this.scripts.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'scripts:write', mfa: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.scripts.delete(principal, id);
  }
}
