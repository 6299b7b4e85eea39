import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

export class FetchCommandsQueryDto {
  /**
   * Seconds to hold the request open when nothing is due, 0 to 60 (default 0: answer at once). A
   * command queued meanwhile is answered within a fraction of a second.
   */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(60) wait?: number;
}

export class CommandResultDto {
  @IsIn(['completed', 'failed']) status: 'completed' | 'failed';
  /** What went wrong on the device, up to 2000 characters. */
  @IsOptional() @IsString() @MaxLength(2000) @NoNul() error?: string;
}

export class AgentCommandDto {
  id: Uuid;
  type: 'actuate_elevation' | 'revoke_elevation';
  /** actuate_elevation: { elevationRequestId, timeoutMs }; revoke_elevation: { elevationRequestId }. */
  payload: Record<string, unknown>;
  createdAt: DateTime;
  /** How many times the command has been handed out: above 1, an earlier delivery was not acknowledged (the id tells the agent whether it already has it). */
  deliveryCount: Int;
}

export class AgentCommandListDto {
  commands: AgentCommandDto[];
  /** Present when the instance is stopping: reconnect after this many milliseconds (a random pause, so that a fleet spreads out). */
  reconnectAfterMs?: Int;
}

export class CommandAckResponseDto {
  commandId: Uuid;
  /** `delivered` until the result is reported, then `completed` or `failed`. */
  status: 'delivered' | 'completed' | 'failed' | 'queued';
}

export class CommandResultResponseDto {
  success: true;
  commandId: Uuid;
  status: 'completed' | 'failed';
}
