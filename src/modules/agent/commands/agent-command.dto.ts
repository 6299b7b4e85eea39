import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

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
}

export class AgentCommandListDto {
  commands: AgentCommandDto[];
}

export class CommandResultResponseDto {
  success: true;
  commandId: Uuid;
  status: 'completed' | 'failed';
}
