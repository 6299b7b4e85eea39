import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDateString, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

/** Who performed an action: a person's session, an API key, an agent, or the service itself. */
export const ACTOR_TYPES = ['user', 'api_key', 'agent', 'system'] as const;

export class ListAuditLogsQueryDto {
  /** Exact action, or a prefix ending in `*` (e.g. `sso.provider.*`). */
  @IsOptional() @IsString() @MaxLength(100) action?: string;
  @IsOptional() @IsUUID() actorId?: string;
  @IsOptional() @IsIn(ACTOR_TYPES) actorType?: string;
  /** Everything one person did, with any credential (their sessions and their API keys). */
  @IsOptional() @IsUUID() actorUserId?: string;
  @IsOptional() @IsString() @MaxLength(64) resourceType?: string;
  @IsOptional() @IsString() @MaxLength(64) resourceId?: string;
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsDateString() from?: string;
  @IsOptional() @IsDateString() to?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) page?: number = 1;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number = 50;
}

export class AuditLogDto {
  id: Uuid;
  orgId: Uuid | null;
  partnerId: Uuid | null;
  @ApiProperty({ enum: ACTOR_TYPES }) actorType: string;
  actorId: Uuid | null;
  /** The person behind the action: the signed-in user, or the creator of the API key used. */
  actorUserId: Uuid | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  details: Record<string, unknown>;
  ip: string | null;
  requestId: string | null;
  createdAt: DateTime;
}

export class AuditLogListDto {
  success: true;
  auditLogs: AuditLogDto[];
  pagination: { page: number; limit: number; total: number };
}
