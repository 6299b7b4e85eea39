import { IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';
import type { Uuid } from '../../../common/openapi/formats';

export class ActuateElevationDto {
  /** An approved elevation request of this device. */
  @IsUUID() elevationRequestId: string;
  /** How long the agent waits for the consent prompt, 1000 to 60000 ms (default 8000). */
  @IsOptional() @IsInt() @Min(1000) @Max(60000) timeoutMs?: number;
}

export class ActuationResultDto {
  success: true;
  /** The queued actuate_elevation command. */
  commandId: Uuid;
  elevationRequestId: Uuid;
}
