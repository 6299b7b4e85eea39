import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import { UuidParam } from '../../common/pipes/uuid.pipe';
import type { Principal } from '../../common/principal';
import { SuccessDto } from '../tenancy/shared/pagination.dto';
import {
  AssignmentListDto,
  AssignmentResponseDto,
  CreateAssignmentDto,
  CreatePolicyDto,
  ListPoliciesQueryDto,
  PolicyListDto,
  PolicyResponseDto,
  UpdatePolicyDto,
} from './policy.dto';
import { PolicyService } from './policy.service';

/** Policy writes need MFA: they change the configuration of whole fleets. */
@ApiTags('policies')
@Controller('policies')
export class PolicyController {
  constructor(private readonly policies: PolicyService) {}

  @Get()
  @Auth({ permission: 'policies:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListPoliciesQueryDto): Promise<PolicyListDto> {
    return this.policies.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'policies:read' })
  get(@UuidParam() id: string): Promise<PolicyResponseDto> {
    return this.policies.get(id);
  }

  @Post()
  @Auth({ permission: 'policies:write', mfa: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreatePolicyDto): Promise<PolicyResponseDto> {
    return this.policies.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'policies:write', mfa: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdatePolicyDto): Promise<PolicyResponseDto> {
    return this.policies.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'policies:write', mfa: true })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.policies.delete(principal, id);
  }

  @Get(':id/assignments')
  @Auth({ permission: 'policies:read' })
  assignments(@UuidParam() id: string): Promise<AssignmentListDto> {
    return this.policies.assignments(id);
  }

  @Post(':id/assignments')
  @Auth({ permission: 'policies:write', mfa: true })
  assign(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: CreateAssignmentDto): Promise<AssignmentResponseDto> {
    return this.policies.assign(principal, id, dto);
  }

  @Delete(':id/assignments/:assignmentId')
  @Auth({ permission: 'policies:write', mfa: true })
  unassign(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('assignmentId') assignmentId: string): Promise<SuccessDto> {
    return this.policies.unassign(principal, id, assignmentId);
  }
}
