import { IsIn, IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';
import type { Int, Uuid } from '../../../common/openapi/formats';

export const UNMATCHED_VERDICTS = ['require_approval', 'auto_deny'] as const;
export type UnmatchedVerdict = (typeof UNMATCHED_VERDICTS)[number];

export class PamConfigQueryDto {
  /** Defaults to the caller's organization for organization-scope sessions; required for partner scope. */
  @IsOptional() @IsUUID() orgId?: string;
}

export class PutPamConfigDto {
  @IsOptional() @IsUUID() orgId?: string;
  /** What an elevation no rule matched becomes: require_approval (default) or auto_deny. */
  @IsIn(UNMATCHED_VERDICTS) defaultUnmatchedVerdict: UnmatchedVerdict;
  /** Approval window, in minutes (1-1440), of rules that set none; unchanged when absent (15 until set). */
  @IsOptional() @IsInt() @Min(1) @Max(1440) defaultApprovalDurationMinutes?: number;
}

export class PamConfigDto {
  orgId: Uuid;
  defaultUnmatchedVerdict: UnmatchedVerdict;
  defaultApprovalDurationMinutes: Int;
}

export class PamConfigResponseDto {
  success: true;
  config: PamConfigDto;
}
