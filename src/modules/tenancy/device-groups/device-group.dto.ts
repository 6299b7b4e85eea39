import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsOptional, IsString, IsUUID, Length, ValidateIf } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export class CreateDeviceGroupDto {
  /** Owning organization; defaults to the caller's organization for organization-scope sessions. */
  @IsOptional() @IsUUID() orgId?: string;
  /** A site of the same organization; absent for an organization-wide group. */
  @IsOptional() @IsUUID() siteId?: string;
  /** 1 to 255 characters, unique within the organization. */
  @IsString() @Length(1, 255) @NoNul() name: string;
}

export class UpdateDeviceGroupDto {
  /** A site of the group's organization, or null to make the group organization-wide. */
  @ValidateIf((_, v) => v !== undefined && v !== null) @IsUUID() siteId?: string | null;
  @ValidateIf((_, v) => v !== undefined) @IsString() @Length(1, 255) @NoNul() name?: string;
}

export class ListDeviceGroupsQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsUUID() siteId?: string;
}

export class AddGroupMembersDto {
  /** 1 to 500 devices of the group's organization. */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(500) @ArrayUnique() @IsUUID('all', { each: true }) deviceIds: string[];
}

export class DeviceGroupDto {
  id: Uuid;
  orgId: Uuid;
  siteId: Uuid | null;
  name: string;
  /** Members the caller can see (a site-restricted caller sees only devices of their sites). */
  deviceIds: Uuid[];
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class DeviceGroupResponseDto {
  success: true;
  deviceGroup: DeviceGroupDto;
}

export class DeviceGroupListDto {
  success: true;
  deviceGroups: DeviceGroupDto[];
}
