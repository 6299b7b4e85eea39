import { ApiProperty, OmitType, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';
import { FLOW_TYPES, NEGATABLE_KEYS, PAM_VERDICTS, type FlowType, type NegatableKey, type PamVerdict } from './engine/rule.types';
import { isValidTimeZone } from './engine/time-window.util';
import { ELEVATION_STATUSES } from '../requests/elevation-request.types';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

/** Leading and trailing spaces are never meaningful in names and criteria. */
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

const IsRuleTimeZone = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isRuleTimeZone',
      validator: {
        validate: (value) => typeof value === 'string' && value.length <= 64 && isValidTimeZone(value),
        defaultMessage: () => 'timezone must be UTC or an IANA Area/Location zone such as Europe/Paris',
      },
    },
    options,
  );

/** May be absent, but not null: the field always has a value once stored. */
const OptionalNotNull = () => ValidateIf((_object, value) => value !== undefined);

export const RULE_PRIORITY_MIN = -1_000_000;
export const RULE_PRIORITY_MAX = 1_000_000;

export class PamTimeWindowDto {
  /** HH:MM, 24-hour, 00:00 to 23:59, inclusive. */
  @IsString() @Matches(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'start must be HH:MM between 00:00 and 23:59' }) start: string;
  /** HH:MM, inclusive; earlier than start for an overnight window, whose after-midnight part belongs to the day it started on. */
  @IsString() @Matches(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'end must be HH:MM between 00:00 and 23:59' }) end: string;
  /** Days the window starts on, 0 (Sunday) to 6 (Saturday); absent or null means every day. */
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(7) @IsInt({ each: true }) @Min(0, { each: true }) @Max(6, { each: true }) days?: number[] | null;
  /** UTC (default) or an IANA Area/Location zone. */
  @IsOptional() @IsRuleTimeZone() timezone?: string | null;
}

/** The matching criteria of a rule (spec P2.2), shared by rule writes and preview. */
export class PamRuleCriteriaDto {
  /** Site the rule applies to; null or absent: the whole organization. */
  @IsOptional() @IsUUID() siteId?: string | null;
  /** Code signer, exact and case-insensitive. Mutually exclusive with matchSignerGroupId. */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(255) matchSigner?: string | null;
  /** A signer group of the same organization. */
  @IsOptional() @IsUUID() matchSignerGroupId?: string | null;
  /** SHA-256 of the executable, 64 hexadecimal characters (stored lower case). */
  @IsOptional() @Transform(trim) @IsString() @Matches(/^([0-9a-fA-F]{64})?$/, { message: 'matchHash must be 64 hexadecimal characters' }) matchHash?: string | null;
  /** Path glob: case-insensitive, \ and / alike, anchored, * within a folder, ** across folders, ? one character. */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(1024) matchPathGlob?: string | null;
  /** Parent-process glob, same syntax as matchPathGlob. */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(1024) matchParentImage?: string | null;
  /** Case-insensitive substring of the command line. */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(1024) matchCommandLine?: string | null;
  /** Requesting user, exact and case-insensitive. */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(255) matchUser?: string | null;
  /** Directory group of the requesting user. */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(255) matchAdGroup?: string | null;
  /** AI tool name, exact and case-insensitive (tool-action rule). */
  @IsOptional() @Transform(trim) @IsString() @MaxLength(255) matchToolName?: string | null;
  /** Risk tier 0-4, exact (tool-action rule). */
  @IsOptional() @IsInt() @Min(0) @Max(4) matchRiskTier?: number | null;
  /** Criterion keys to invert. A negated criterion never matches a request that lacks the value. */
  @IsOptional() @IsArray() @ArrayMaxSize(NEGATABLE_KEYS.length * 2) @IsIn(NEGATABLE_KEYS, { each: true }) matchNegate?: NegatableKey[] | null;
  /** When the rule applies, read at the server's decision time. */
  @IsOptional() @IsObject() @ValidateNested() @Type(() => PamTimeWindowDto) timeWindow?: PamTimeWindowDto | null;
}

export class CreatePamRuleDto extends PamRuleCriteriaDto {
  /** Owning organization; defaults to the caller's for organization-scope sessions, required for partner scope. */
  @IsOptional() @IsUUID() orgId?: string;
  /** 1 to 255 characters. */
  @Transform(trim) @IsString() @Length(1, 255) name: string;
  @IsIn(PAM_VERDICTS) verdict: PamVerdict;
  /** Lower runs first; default 100. */
  @OptionalNotNull() @IsInt() @Min(RULE_PRIORITY_MIN) @Max(RULE_PRIORITY_MAX) priority?: number;
  /** Default true. */
  @OptionalNotNull() @IsBoolean() enabled?: boolean;
  /** Approval window of an approved request, 1-1440 minutes; null falls back to the organization default. */
  @IsOptional() @IsInt() @Min(1) @Max(1440) approvalDurationMinutes?: number | null;
}

/** Partial update; the merged rule must pass the same shape checks as a new one. */
export class UpdatePamRuleDto extends PartialType(OmitType(CreatePamRuleDto, ['orgId'] as const), { skipNullProperties: false }) {}

export class ListPamRulesQueryDto {
  /** Only this organization's rules (partner technicians see every reachable organization otherwise). */
  @IsOptional() @IsUUID() orgId?: string;
}

export class PreviewPamRuleDto extends PamRuleCriteriaDto {
  /** Organization whose history is scanned; defaults to the caller's for organization-scope sessions. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Days of history, 1-90; default 30. */
  @IsOptional() @IsInt() @Min(1) @Max(90) windowDays?: number;
  /** Only requests of this flow type. */
  @IsOptional() @IsIn(FLOW_TYPES) flowType?: FlowType;
}

export class PamTimeWindowOutDto {
  start: string;
  end: string;
  days?: Int[] | null;
  timezone?: string | null;
}

export class PamRuleDto {
  id: Uuid;
  orgId: Uuid;
  siteId: Uuid | null;
  name: string;
  verdict: PamVerdict;
  priority: Int;
  enabled: boolean;
  matchSigner: string | null;
  matchSignerGroupId: Uuid | null;
  matchHash: string | null;
  matchPathGlob: string | null;
  matchParentImage: string | null;
  matchCommandLine: string | null;
  matchUser: string | null;
  matchAdGroup: string | null;
  matchToolName: string | null;
  matchRiskTier: Int | null;
  matchNegate: NegatableKey[] | null;
  timeWindow: PamTimeWindowOutDto | null;
  approvalDurationMinutes: Int | null;
  /** True when the rule pins a risk tier its tool can no longer resolve to (it cannot match). */
  matchRiskTierStale: boolean;
  /** Tiers the rule's tool selector can resolve to; null when no tier is pinned or the tool is unknown. */
  matchRiskTierValidTiers: Int[] | null;
  createdBy: Uuid | null;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class PamRuleResponseDto {
  success: true;
  rule: PamRuleDto;
}

export class PamRuleListDto {
  success: true;
  rules: PamRuleDto[];
}

export class PamSuccessDto {
  success: true;
}

export class StatusBreakdownDto {
  pending: Int;
  approved: Int;
  auto_approved: Int;
  denied: Int;
  expired: Int;
  revoked: Int;
  actuating: Int;
}

export class PreviewSampleDto {
  id: Uuid;
  requestedAt: DateTime;
  flowType: FlowType;
  @ApiProperty({ enum: ELEVATION_STATUSES }) status: string;
}

export class PamRulePreviewDto {
  success: true;
  totalMatched: Int;
  totalScanned: Int;
  windowDays: Int;
  /** True when the window holds more requests than the scan limit: only the newest were scanned. */
  truncated: boolean;
  statusBreakdown: StatusBreakdownDto;
  /** Up to 20 matched requests, newest first. */
  sample: PreviewSampleDto[];
}
