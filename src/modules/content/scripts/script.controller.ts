import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { CreateScriptDto, ListScriptsQueryDto, ScriptListDto, ScriptResponseDto, UpdateScriptDto } from './script.dto';
import { ScriptService } from './script.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

/** Script writes need MFA: scripts run on endpoints, by default as SYSTEM. */
@ApiTags('scripts')
@Controller('scripts')
export class ScriptController {
  constructor(private readonly scripts: ScriptService) {}

  /**
   * Lists scripts without their bodies, a page at a time.
   *
   * @remarks Needs `scripts:read`. Filters: `orgId`, `availability`, `category`, `language`, `q`.
   */
  @Get()
  @Auth({ permission: 'scripts:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListScriptsQueryDto): Promise<ScriptListDto> {
    return this.scripts.list(principal, query);
  }

  /**
   * Reads one script with its body, parameters and exit-code severities.
   *
   * @remarks Needs `scripts:read`.
   */
  @Get(':id')
  @Auth({ permission: 'scripts:read' })
  get(@UuidParam() id: string): Promise<ScriptResponseDto> {
    return this.scripts.get(id);
  }

  /**
   * Creates a script, for one organization or (`availability: partner`) every organization of the partner.
   *
   * @remarks Needs `scripts:write` and an MFA session: scripts run on devices, by default as SYSTEM. 409
   * `name_taken` for a name its owner already uses.
   */
  @Post()
  @Auth({ permission: 'scripts:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateScriptDto): Promise<ScriptResponseDto> {
    return this.scripts.create(principal, dto);
  }

  /**
   * Changes a script.
   *
   * @remarks Needs `scripts:write` and an MFA session.
   */
  @Patch(':id')
  @Auth({ permission: 'scripts:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateScriptDto): Promise<ScriptResponseDto> {
    return this.scripts.update(principal, id, dto);
  }

  /**
   * Deletes a script.
   *
   * @remarks Needs `scripts:write` and an MFA session.
   */
  @Delete(':id')
  @Auth({ permission: 'scripts:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.scripts.delete(principal, id);
  }
}
