import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, IsUUID, Length, Max, MaxLength, Min } from 'class-validator';
import type { OwnerScope } from '../content/ownership.util';
import { POLICY_TYPES, PolicyType } from './features/policy-feature.types';
import type { DateTime, Int, Uuid } from '../../common/openapi/formats';

export const TARGET_TYPES = ['partner', 'organization', 'site', 'device_group', 'device'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

export class CreatePolicyDto {
  /** partner: owned by the partner, assignable in every organization (partner-scope session); organization (default): one organization's. */
  @IsOptional() @IsIn(['partner', 'organization']) scope?: OwnerScope;
  @IsOptional() @IsUUID() orgId?: string;
  /** Immutable once created. */
  @IsIn(POLICY_TYPES) type: PolicyType;
  @IsString() @Length(1, 255) name: string;
  @IsOptional() @IsString() @MaxLength(2000) description?: string | null;
  /** Default true. */
  @IsOptional() @IsBoolean() enabled?: boolean;
  /** Settings keyed by feature name (configuration: agent, monitoring, pam, software; patch: patch). */
  @IsDefined() @IsObject() features: Record<string, unknown>;
}

export class UpdatePolicyDto {
  @IsOptional() @IsString() @Length(1, 255) name?: string;
  @IsOptional() @IsString() @MaxLength(2000) description?: string | null;
  @IsOptional() @IsBoolean() enabled?: boolean;
  /** Replaces the whole features object. */
  @IsOptional() @IsObject() features?: Record<string, unknown>;
}

export class ListPoliciesQueryDto {
  /** Policies that can apply to this organization: the partner's and its own. */
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsIn(POLICY_TYPES) type?: PolicyType;
  @IsOptional() @IsIn(['partner', 'organization']) scope?: OwnerScope;
}

export class CreateAssignmentDto {
  @IsIn(TARGET_TYPES) targetType: TargetType;
  /** The partner, organization, site, device group or device id. */
  @IsUUID() targetId: string;
  /** 0 to 10,000, default 100; among assignments at the same level, the lower number wins. */
  @IsOptional() @IsInt() @Min(0) @Max(10_000) priority?: number;
}

export class PolicyAssignmentDto {
  id: Uuid;
  policyId: Uuid;
  targetType: TargetType;
  targetId: Uuid;
  orgId: Uuid | null;
  priority: Int;
  createdAt: DateTime;
}

export class PolicyDto {
  id: Uuid;
  scope: OwnerScope;
  partnerId: Uuid | null;
  orgId: Uuid | null;
  type: PolicyType;
  name: string;
  description: string | null;
  enabled: boolean;
  features: Record<string, unknown>;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class PolicyWithAssignmentsDto extends PolicyDto {
  /** The assignments the caller can see (another organization's are hidden). */
  assignments: PolicyAssignmentDto[];
}

export class PolicyResponseDto {
  success: true;
  policy: PolicyWithAssignmentsDto;
}

export class PolicyListDto {
  success: true;
  policies: PolicyDto[];
}

export class AssignmentResponseDto {
  success: true;
  assignment: PolicyAssignmentDto;
}

export class AssignmentListDto {
  success: true;
  assignments: PolicyAssignmentDto[];
}
