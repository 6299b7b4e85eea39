import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import { PageQueryDto, PaginationDto } from '../../../common/pagination.dto';
import { FLOW_TYPES, type FlowType } from '../rules/engine/rule.types';
import { ELEVATION_STATUSES, type DecisionSource, type ElevationStatus, type PamEventType } from './elevation-request.types';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

export class ListElevationRequestsQueryDto extends PageQueryDto {
  /** Current status; a request past its deadline counts as expired even before the sweeper has run. */
  @IsOptional() @IsIn(ELEVATION_STATUSES) status?: ElevationStatus;
  @IsOptional() @IsIn(FLOW_TYPES) flowType?: FlowType;
  @IsOptional() @IsUUID() deviceId?: string;
  /** Must be one of the caller's sites for a site-restricted caller. */
  @IsOptional() @IsUUID() siteId?: string;
  /** Narrows a partner-scope caller to one organization. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Inclusive lower bound on requestedAt. */
  @IsOptional() @IsISO8601({ strict: true }) from?: string;
  /** Inclusive upper bound on requestedAt. */
  @IsOptional() @IsISO8601({ strict: true }) to?: string;
}

export class RespondElevationRequestDto {
  @IsIn(['approve', 'deny']) decision: 'approve' | 'deny';
  /** Optional, also on deny; up to 2000 characters. */
  @IsOptional() @IsString() @MaxLength(2000) @NoNul() reason?: string;
  /** Approval window in minutes, 1 to 1440 (default 15); ignored on deny. */
  @IsOptional() @IsInt() @Min(1) @Max(1440) durationMinutes?: number;
}

export class RevokeElevationRequestDto {
  /** Required, 1 to 2000 characters, not only whitespace. */
  @IsString() @Length(1, 2000) @Matches(/\S/, { message: 'reason must not be blank' }) @NoNul() reason: string;
}

export class ElevationRequestDto {
  id: Uuid;
  orgId: Uuid;
  siteId: Uuid;
  deviceId: Uuid;
  deviceHostname: string | null;
  siteName: string | null;
  flowType: FlowType;
  status: ElevationStatus;
  subjectUsername: string | null;
  targetExecutablePath: string | null;
  targetExecutableSigner: string | null;
  requestedAt: DateTime;
  approvedByName: string | null;
  deniedByName: string | null;
  revokedByName: string | null;
  matchedPolicyName: string | null;
  pamRuleId: Uuid | null;
  pamRuleName: string | null;
  /** Who decided: null while pending, and for a request the organization default decided. */
  decisionSource: DecisionSource | null;
  /** End of the elevation window; null when none was granted. */
  expiresAt: DateTime | null;
  /** ai_tool_action rows only. */
  toolName?: string | null;
  /** ai_tool_action rows only. */
  riskTier?: Int | null;
  /** ai_tool_action rows only: SHA-256 of the canonical JSON of the tool input. */
  actionDigest?: string | null;
}

export class ElevationRequestListDto {
  success: true;
  requests: ElevationRequestDto[];
  pagination: PaginationDto;
}

export class ActiveElevationListDto {
  success: true;
  active: ElevationRequestDto[];
}

export class ElevationEventDto {
  id: Uuid;
  type: PamEventType;
  fromStatus: ElevationStatus | null;
  toStatus: ElevationStatus;
  @ApiProperty({ enum: ['user', 'api_key', 'agent', 'system'] }) actorType: string;
  actorId: Uuid | null;
  details: Record<string, unknown>;
  createdAt: DateTime;
}

export class ElevationRequestDetailDto {
  success: true;
  request: ElevationRequestDto;
  /** The transition log, oldest first. */
  events: ElevationEventDto[];
}

export class ElevationTransitionResultDto {
  success: true;
  id: Uuid;
  status: ElevationStatus;
}
