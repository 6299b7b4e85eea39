import { IsDefined, IsObject, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../../common/pagination.dto';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

export class CreateDynamicGroupDto {
  /** Required from partner-scope callers; an organization session defaults to its organization. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Limits members to one site; absent or null: the whole organization. */
  @IsOptional() @IsUUID() siteId?: string | null;
  @IsString() @Length(1, 255) name: string;
  /**
   * { all | any: [filters] } | { not: filter } | { field: hostname|osType|siteId|status, op, value }
   * | { customField: <definition id>, op, value }. See docs/tenancy-content.md.
   */
  @IsDefined() @IsObject() filter: Record<string, unknown>;
}

export class UpdateDynamicGroupDto {
  @IsOptional() @IsUUID() siteId?: string | null;
  @IsOptional() @IsString() @Length(1, 255) name?: string;
  @IsOptional() @IsObject() filter?: Record<string, unknown>;
}

export class ListDynamicGroupsQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
}

export class DynamicGroupDto {
  id: Uuid;
  orgId: Uuid;
  siteId: Uuid | null;
  name: string;
  filter: Record<string, unknown>;
  memberCount: Int;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class DynamicGroupResponseDto {
  success: true;
  group: DynamicGroupDto;
}

export class DynamicGroupListDto {
  success: true;
  groups: DynamicGroupDto[];
}

export class GroupMemberDto {
  deviceId: Uuid;
  hostname: string;
  siteId: Uuid;
}

export class GroupMembersQueryDto extends PageQueryDto {}

export class GroupMembersDto {
  success: true;
  members: GroupMemberDto[];
  pagination: PaginationDto;
}
