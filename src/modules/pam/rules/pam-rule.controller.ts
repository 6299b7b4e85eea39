import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import {
  CreatePamRuleDto,
  ListPamRulesQueryDto,
  PamRuleListDto,
  PamRulePreviewDto,
  PamRuleResponseDto,
  PamSuccessDto,
  PreviewPamRuleDto,
  UpdatePamRuleDto,
} from './pam-rule.dto';
import { PamRuleService } from './pam-rule.service';
import { RulePreviewService } from './preview/rule-preview.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('pam')
@Controller('pam/rules')
export class PamRuleController {
  constructor(
    private readonly rules: PamRuleService,
    private readonly preview: RulePreviewService,
  ) {}

  /**
   * Lists PAM rules in evaluation order.
   *
   * @remarks Needs `devices:read`. Rows carry `matchRiskTierStale` when a rule's pinned risk tier can no longer
   * match its tool.
   */
  @Get()
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListPamRulesQueryDto): Promise<PamRuleListDto> {
    return this.rules.list(principal, query);
  }

  /**
   * Creates a PAM rule.
   *
   * @remarks Needs `devices:write` and an MFA session. 400 `invalid_rule_shape` for a rule without identifying
   * criteria or mixing executable and tool-action criteria; 400 `pam_rule_risk_tier_unreachable` (with
   * `validTiers`) for a tier its tool cannot have.
   */
  @Post()
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  @ApiErrors({ 400: ['invalid_rule_shape', 'pam_rule_risk_tier_unreachable'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreatePamRuleDto): Promise<PamRuleResponseDto> {
    return this.rules.create(principal, dto);
  }

  /**
   * Previews a draft rule: how many recent requests it would have matched, with a sample.
   *
   * @remarks Needs `devices:write`, without MFA (nothing is saved). Matches the draft alone against the
   * organization's history (`windowDays` 1–90, default 30), ignoring other rules and software policies;
   * `truncated` when the history was longer than the scan limit.
   */
  @Post('preview')
  @HttpCode(200)
  @Auth({ permission: 'devices:write', siteScope: true })
  previewRule(@CurrentPrincipal() principal: Principal, @Body() dto: PreviewPamRuleDto): Promise<PamRulePreviewDto> {
    return this.preview.preview(principal, dto);
  }

  /**
   * Changes a PAM rule; the merged rule is checked like a new one.
   *
   * @remarks Needs `devices:write` and an MFA session. Errors as for creation.
   */
  @Patch(':id')
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  @ApiErrors({ 400: ['invalid_rule_shape', 'pam_rule_risk_tier_unreachable'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdatePamRuleDto): Promise<PamRuleResponseDto> {
    return this.rules.update(principal, id, dto);
  }

  /**
   * Deletes a PAM rule.
   *
   * @remarks Needs `devices:write` and an MFA session.
   */
  @Delete(':id')
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<PamSuccessDto> {
    return this.rules.delete(principal, id);
  }
}
