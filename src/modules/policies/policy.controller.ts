import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import { UuidParam } from '../../common/pipes/uuid.pipe';
import type { Principal } from '../../common/principal';
import { SuccessDto } from '../../common/pagination.dto';
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
import { ApiErrors } from '../../common/decorators/api-errors.decorator';

/** Policy writes need MFA: they change the configuration of whole fleets. */
@ApiTags('policies')
@Controller('policies')
export class PolicyController {
  constructor(private readonly policies: PolicyService) {}

  /**
   * Lists configuration and patch policies, or with `orgId` those that can apply to that organization.
   *
   * @remarks Needs `policies:read`.
   */
  @Get()
  @Auth({ permission: 'policies:read' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListPoliciesQueryDto): Promise<PolicyListDto> {
    return this.policies.list(principal, query);
  }

  /**
   * Reads one policy with the assignments the caller can see.
   *
   * @remarks Needs `policies:read`. 404 for a policy outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'policies:read' })
  get(@UuidParam() id: string): Promise<PolicyResponseDto> {
    return this.policies.get(id);
  }

  /**
   * Creates a configuration or patch policy, owned by an organization or (`scope: partner`) the partner.
   *
   * @remarks Needs `policies:write` and an MFA session; a partner policy needs a partner-scope session of a
   * technician who reaches every organization. 400 with the path of an unknown feature or a bad setting; 409
   * `name_taken`.
   */
  @Post()
  @Auth({ permission: 'policies:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['name_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreatePolicyDto): Promise<PolicyResponseDto> {
    return this.policies.create(principal, dto);
  }

  /**
   * Changes a policy; `features` is replaced whole.
   *
   * @remarks Needs `policies:write` and an MFA session (partner policies: as for creation).
   */
  @Patch(':id')
  @Auth({ permission: 'policies:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'], 409: ['name_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdatePolicyDto): Promise<PolicyResponseDto> {
    return this.policies.update(principal, id, dto);
  }

  /**
   * Deletes a policy with its assignments.
   *
   * @remarks Needs `policies:write` and an MFA session (partner policies: as for creation).
   */
  @Delete(':id')
  @Auth({ permission: 'policies:write', mfa: true })
  @ApiErrors({ 403: ['partner_scope_required'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.policies.delete(principal, id);
  }

  /**
   * Lists where a policy is assigned.
   *
   * @remarks Needs `policies:read`. Only the assignments within the caller's reach.
   */
  @Get(':id/assignments')
  @Auth({ permission: 'policies:read' })
  assignments(@UuidParam() id: string): Promise<AssignmentListDto> {
    return this.policies.assignments(id);
  }

  /**
   * Assigns a policy to a partner, organization, site, device group or device.
   *
   * @remarks Needs `policies:write` and an MFA session. At one level the lower `priority` wins; the closest level
   * wins overall. 400 `target_not_found` or `target_level_not_allowed` (an organization policy at partner level);
   * 409 `assignment_exists`.
   */
  @Post(':id/assignments')
  @Auth({ permission: 'policies:write', mfa: true })
  @ApiErrors({ 400: ['target_not_found', 'target_level_not_allowed'], 409: ['assignment_exists'] })
  assign(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: CreateAssignmentDto): Promise<AssignmentResponseDto> {
    return this.policies.assign(principal, id, dto);
  }

  /**
   * Removes one assignment of a policy.
   *
   * @remarks Needs `policies:write` and an MFA session.
   */
  @Delete(':id/assignments/:assignmentId')
  @Auth({ permission: 'policies:write', mfa: true })
  unassign(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('assignmentId') assignmentId: string): Promise<SuccessDto> {
    return this.policies.unassign(principal, id, assignmentId);
  }
}
