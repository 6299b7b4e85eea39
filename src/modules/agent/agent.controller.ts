import { Body, Controller, Get, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentAuth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import type { Principal } from '../../common/principal';
import { AgentSettingsService } from './agent-settings.service';
import { ElevationIngestDto, ElevationIngestResultDto, PamSettingsDto } from './dto/elevation-ingest.dto';
import { ElevationIngestService } from './elevation-ingest.service';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { OneStatement } from '../../common/decorators/one-statement.decorator';

/**
 * Routes agents call with their own token; `:id` is the agent id and must be the token's
 * (AgentAuth answers 401 otherwise). Bodies are capped at 32 KB on the bytes read (app.setup).
 */
@ApiTags('agents')
@Controller('agents/:id')
export class AgentController {
  constructor(
    private readonly ingest: ElevationIngestService,
    private readonly settings: AgentSettingsService,
  ) {}

  /**
   * Reports an elevation prompt the agent observed; answers the decision.
   *
   * @remarks The agent's token. 201 with the recorded request and its status (`pending`, `auto_approved` or
   * `denied`), or 200 `{ id: null, status: "ignored" }` when an ignore rule matched and nothing was recorded. The
   * body is snake_case, at most 32 KB (413). 429 `rate_limited` past 10 reports per second per device (bursts of
   * 20).
   */
  @Post('elevation-requests')
  @AgentAuth()
  @ApiCreatedResponse({ description: 'Recorded: `status` is `pending`, `auto_approved` or `denied`.', type: ElevationIngestResultDto })
  @ApiOkResponse({ description: 'An ignore rule matched and nothing was recorded: `{ id: null, status: "ignored" }`.', type: ElevationIngestResultDto })
  @ApiErrors({ 403: ['device_decommissioned'], 429: ['rate_limited'] })
  async elevationRequest(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: ElevationIngestDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ElevationIngestResultDto> {
    const result = await this.ingest.ingest(principal, dto);
    res.status(result.id === null ? 200 : 201);
    return result;
  }

  /**
   * The device's PAM settings: whether its agent should intercept elevation prompts.
   *
   * @remarks The agent's token.
   */
  @Get('pam-settings')
  @AgentAuth()
  @OneStatement()
  pamSettings(@CurrentPrincipal() principal: Principal): Promise<PamSettingsDto> {
    return this.settings.pamSettings(principal);
  }
}
