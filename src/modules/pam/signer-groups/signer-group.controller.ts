import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { PamSuccessDto } from '../rules/pam-rule.dto';
import { CreateSignerGroupDto, ListSignerGroupsQueryDto, SignerGroupListDto, SignerGroupResponseDto, UpdateSignerGroupDto } from './signer-group.dto';
import { SignerGroupService } from './signer-group.service';

@ApiTags('pam')
@Controller('pam/signer-groups')
export class SignerGroupController {
  constructor(private readonly groups: SignerGroupService) {}

  @Get()
  @Auth({ permission: 'devices:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSignerGroupsQueryDto): Promise<SignerGroupListDto> {
    return this.groups.list(principal, query);
  }

  @Post()
  @Auth({ permission: 'devices:write', mfa: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSignerGroupDto): Promise<SignerGroupResponseDto> {
    return this.groups.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'devices:write', mfa: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateSignerGroupDto): Promise<SignerGroupResponseDto> {
    return this.groups.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'devices:write', mfa: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<PamSuccessDto> {
    return this.groups.delete(principal, id);
  }
}
