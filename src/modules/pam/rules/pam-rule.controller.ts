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

@ApiTags('pam')
@Controller('pam/rules')
export class PamRuleController {
  constructor(
    private readonly rules: PamRuleService,
    private readonly preview: RulePreviewService,
  ) {}

  @Get()
  @Auth({ permission: 'devices:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListPamRulesQueryDto): Promise<PamRuleListDto> {
    return this.rules.list(principal, query);
  }

  @Post()
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreatePamRuleDto): Promise<PamRuleResponseDto> {
    return this.rules.create(principal, dto);
  }

  /** A pure per-rule match over the organization's history; needs devices:write but no MFA (spec 5). */
  @Post('preview')
  @HttpCode(200)
  @Auth({ permission: 'devices:write', siteScope: true })
  previewRule(@CurrentPrincipal() principal: Principal, @Body() dto: PreviewPamRuleDto): Promise<PamRulePreviewDto> {
    return this.preview.preview(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdatePamRuleDto): Promise<PamRuleResponseDto> {
    return this.rules.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'devices:write', mfa: true, siteScope: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<PamSuccessDto> {
    return this.rules.delete(principal, id);
  }
}
