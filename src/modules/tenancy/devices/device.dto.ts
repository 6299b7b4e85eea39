import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import { PageQueryDto, PaginationDto } from '../../../common/pagination.dto';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export const DEVICE_STATUSES = ['active', 'decommissioned'] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/**
 * Whether a device's agent calls the service: `online` when its enrolled agent was last seen within
 * AGENT_ONLINE_THRESHOLD_MS (3 minutes by default), `offline` when it was seen before that, `never`
 * when the device has no enrolled agent or its agent has not called since it was enrolled.
 */
export const AGENT_STATUSES = ['online', 'offline', 'never'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export class ListDevicesQueryDto extends PageQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsUUID() siteId?: string;
  @IsOptional() @IsIn(DEVICE_STATUSES) status?: DeviceStatus;
  /** Case-insensitive substring of the hostname. */
  @IsOptional() @IsString() @Length(1, 255) @NoNul() search?: string;
  /** Only devices whose agent is `online`, `offline` or `never` seen (see `agentStatus` of a device). */
  @IsOptional() @IsIn(AGENT_STATUSES) agentStatus?: AgentStatus;
}

export class CreateDeviceDto {
  /** Optional: the organization is the site's; when given it must match. */
  @IsOptional() @IsUUID() orgId?: string;
  @IsUUID() siteId: string;
  /** 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() hostname: string;
  /** Free-form operating-system family, up to 32 characters (e.g. windows, macos, linux). */
  @IsOptional() @IsString() @Length(1, 32) @NoNul() osType?: string;
}

export class UpdateDeviceDto {
  @ValidateIf((_, v) => v !== undefined) @IsString() @Length(1, 255) @NoNul() hostname?: string;
  /** A site of the device's organization. */
  @ValidateIf((_, v) => v !== undefined) @IsUUID() siteId?: string;
  /** Decommissioning revokes the device's agent. */
  @ValidateIf((_, v) => v !== undefined) @IsIn(DEVICE_STATUSES) status?: DeviceStatus;
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsString() @Length(1, 32) @NoNul() osType?: string | null;
}

export class DeviceDto {
  id: Uuid;
  orgId: Uuid;
  siteId: Uuid;
  hostname: string;
  osType: string | null;
  @ApiProperty({ enum: DEVICE_STATUSES }) status: string;
  /** The enrolled (not revoked) agent, if any. */
  agentId: Uuid | null;
  enrolledAt: DateTime | null;
  /**
   * When the enrolled agent last called the service (any agent route), as recorded: instances write it
   * at most every AGENT_PRESENCE_FLUSH_MS, so it can trail the last call by up to twice that. Null
   * until the agent first calls.
   */
  lastSeenAt: DateTime | null;
  /**
   * `online`: the enrolled agent was last seen within AGENT_ONLINE_THRESHOLD_MS (3 minutes by
   * default); `offline`: seen before that; `never`: no enrolled agent, or it has not called yet.
   */
  @ApiProperty({ enum: AGENT_STATUSES }) agentStatus: AgentStatus;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class DeviceResponseDto {
  success: true;
  device: DeviceDto;
}

export class DeviceListDto {
  success: true;
  devices: DeviceDto[];
  pagination: PaginationDto;
}

export class DeviceEnrollmentDto {
  success: true;
  agentId: Uuid;
  /** Shown once; only its hash is stored. The agent sends it as `Authorization: Bearer …`. */
  agentToken: string;
}
