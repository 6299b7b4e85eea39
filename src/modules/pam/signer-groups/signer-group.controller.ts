import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { PamSuccessDto } from '../rules/pam-rule.dto';
import { CreateSignerGroupDto, ListSignerGroupsQueryDto, SignerGroupListDto, SignerGroupResponseDto, UpdateSignerGroupDto } from './signer-group.dto';
import { SignerGroupService } from './signer-group.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('pam')
@Controller('pam/signer-groups')
export class SignerGroupController {
  constructor(private readonly groups: SignerGroupService) {}

  /**
   * Lists signer groups: named lists of code signers that PAM rules can match on.
   *
   * @remarks Needs `devices:read`.
   */
  @Get()
  @Auth({ permission: 'devices:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSignerGroupsQueryDto): Promise<SignerGroupListDto> {
    return this.groups.list(principal, query);
  }

  /**
   * Creates a signer group.
   *
   * @remarks Needs `devices:write` and an MFA session. Up to 500 signers; entries are trimmed and de-duplicated
   * ignoring case. 409 `name_taken` for a name the organization already uses.
   */
  @Post()
  @Auth({ permission: 'devices:write', mfa: true })
  @ApiErrors({ 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSignerGroupDto): Promise<SignerGroupResponseDto> {
    return this.groups.create(principal, dto);
  }

  /**
   * Changes a signer group's name, description or signers.
   *
   * @remarks Needs `devices:write` and an MFA session.
   */
  @Patch(':id')
  @Auth({ permission: 'devices:write', mfa: true })
  @ApiErrors({ 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateSignerGroupDto): Promise<SignerGroupResponseDto> {
    return this.groups.update(principal, id, dto);
  }

  /**
   * Deletes a signer group that no rule uses.
   *
   * @remarks Needs `devices:write` and an MFA session. 409 `signer_group_in_use` (with `ruleCount`) while rules
   * refer to it.
   */
  @Delete(':id')
  @Auth({ permission: 'devices:write', mfa: true })
  @ApiErrors({ 409: ['signer_group_in_use'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<PamSuccessDto> {
    return this.groups.delete(principal, id);
  }
}
