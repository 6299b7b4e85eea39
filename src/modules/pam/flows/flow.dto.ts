import { IsDefined, IsInt, IsOptional, IsString, IsUUID, Length, Matches, Max, Min } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { ElevationStatus } from '../requests/elevation-request.types';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

export class CreateJitRequestDto {
  @IsUUID() deviceId: string;
  /** Requested admin window, 1 to 1440 minutes. Decided by a person (or denied by the organization default), never by a rule. */
  @IsInt() @Min(1) @Max(1440) durationMinutes: number;
  /** Why the technician needs admin rights, 1 to 2000 characters. */
  @IsString() @Length(1, 2000) @Matches(/\S/, { message: 'reason must not be blank' }) @NoNul() reason: string;
}

export class CreateToolActionDto {
  @IsUUID() deviceId: string;
  /** Name of the AI tool; its risk tier comes from the registry built into the API. */
  @IsString() @Length(1, 255) @NoNul() toolName: string;
  /** The tool's action, for tools whose actions differ in risk (e.g. run_script: user, elevated). */
  @IsOptional() @IsString() @Length(1, 255) @NoNul() action?: string;
  /** The tool's input, any JSON value; only its SHA-256 digest (of the canonical JSON) is stored. */
  @IsDefined() input: unknown;
}

export class FlowRequestResultDto {
  success: true;
  id: Uuid;
  status: Extract<ElevationStatus, 'pending' | 'auto_approved' | 'denied'>;
  /** End of the elevation window when auto-approved; null otherwise. */
  expiresAt: DateTime | null;
}

export class ToolActionResultDto extends FlowRequestResultDto {
  toolName: string;
  /** null for a tool the registry does not know: only rules naming the tool, or the organization default, decide it. */
  riskTier: Int | null;
  actionDigest: string;
}
