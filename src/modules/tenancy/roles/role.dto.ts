import { PickType, PartialType } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import { IsPermission } from '../../../common/permission-set.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export const ROLE_SCOPES = ['organization', 'partner'] as const;
export type RoleScope = (typeof ROLE_SCOPES)[number];

export class CreateRoleDto {
  /** organization (default): owned by orgId; partner: owned by the caller's partner (partner-scope sessions only). */
  @IsOptional() @IsIn(ROLE_SCOPES) scope?: RoleScope;
  /** Owning organization of an organization role; defaults to the caller's organization for organization-scope sessions. */
  @IsOptional() @IsUUID() orgId?: string;
  /** 1 to 255 characters, unique (case-insensitively) within the owner. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  /** `*` or `resource:action`; never beyond the caller's own permissions. */
  @IsArray() @ArrayMaxSize(100) @ArrayUnique() @IsPermission({ each: true }) permissions: string[];
}

export class UpdateRoleDto extends PartialType(PickType(CreateRoleDto, ['name', 'permissions'] as const), { skipNullProperties: false }) {}

export class ListRolesQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsIn(ROLE_SCOPES) scope?: RoleScope;
}

export class RoleDto {
  id: Uuid;
  scope: RoleScope;
  orgId: Uuid | null;
  partnerId: Uuid | null;
  name: string;
  permissions: string[];
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class RoleResponseDto {
  success: true;
  role: RoleDto;
}

export class RoleListDto {
  success: true;
  roles: RoleDto[];
}
