import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { Uuid } from '../../../common/openapi/formats';

const lowerCase = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value);

/** An instant with its offset: without one, the agent's local time would be read in the server's zone. */
const WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * The body an agent sends when it observes an elevation (consent) prompt (spec P4.6), in the
 * snake_case agents send. Required: who asked and what is to run (user, path, file hash); the rest
 * is optional because an agent cannot always see it (an unsigned file has no signer). The
 * reason, the request time and the decision are the server's, never the agent's.
 */
export class ElevationIngestDto {
  /** The account the prompt is for, e.g. `CORP\\alice`; 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() subject_username: string;

  /** Full path of the executable to elevate; 1 to 1024 characters. */
  @IsString() @Length(1, 1024) @NoNul() target_executable_path: string;

  /** SHA-256 of the file as 64 hexadecimal characters, either case; stored lower-case. */
  // The check runs after lower-casing, so the wire accepts either case: say so (the derived pattern would not).
  @ApiProperty({ type: String, pattern: '^[0-9a-fA-F]{64}$' })
  @Transform(lowerCase)
  @IsString()
  @Matches(/^[0-9a-f]{64}$/, { message: 'target_executable_hash must be a SHA-256 digest: 64 hexadecimal characters' })
  target_executable_hash: string;

  /** Code signer of the file, absent for an unsigned file; 1 to 255 characters. */
  @IsOptional() @IsString() @Length(1, 255) @NoNul() target_executable_signer?: string | null;

  /** Process id of the requesting process. */
  @IsOptional() @IsInt() @Min(0) @Max(2_147_483_647) pid?: number | null;

  /** Image path of the parent process; 1 to 1024 characters. */
  @IsOptional() @IsString() @Length(1, 1024) @NoNul() parent_image?: string | null;

  /** Command line of the launch, up to the 32,767 characters Windows allows. */
  @IsOptional() @IsString() @Length(1, 32_767) @NoNul() command_line?: string | null;

  /** When the agent saw the prompt (ISO 8601 with an offset). Kept as metadata only: time windows use the server's clock. */
  // JSON Schema patterns have no flags: WITH_ZONE with its `i` spelt out.
  @ApiProperty({ type: String, format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:\\d{2})$' })
  @IsOptional()
  @IsISO8601({ strict: true })
  @Matches(WITH_ZONE, { message: 'observed_at must be an ISO 8601 date-time with a zone offset' })
  observed_at?: string | null;
}

export class ElevationIngestResultDto {
  /** null when an ignore rule matched: nothing was recorded. */
  id: Uuid | null;
  status: 'pending' | 'auto_approved' | 'denied' | 'ignored';
}

export class PamSettingsDto {
  /**
   * Whether the agent intercepts elevation prompts on this device: the `pam` feature of
   * configuration policies, the closest assigned policy first; true when none sets it.
   */
  uacInterceptionEnabled: boolean;
}
