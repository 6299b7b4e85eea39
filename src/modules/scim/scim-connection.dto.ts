import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, IsUUID, Length, ValidateNested } from 'class-validator';
import type { DateTime, Uuid } from '../../common/openapi/formats';
import { NoNul } from '../../common/text.util';

export class CreateScimConnectionDto {
  /** 1 to 255 characters, e.g. the IdP's name. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  /** `partner`: a connection of the caller's partner (technicians); default `organization`. */
  @IsOptional() @IsIn(['organization', 'partner']) ownerScope?: 'organization' | 'partner';
  /** The organization of an organization connection; defaults to the caller's organization for an organization-scope session. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Role given to users the connection creates (organization connections only); the caller must hold every permission it grants. */
  @IsOptional() @IsUUID() defaultRoleId?: string;
}

export class ListScimConnectionsQueryDto {
  /** The organization whose connections to list; defaults to the caller's organization for an organization-scope session. */
  @IsOptional() @IsUUID() orgId?: string;
  /** `partner`: the partner's own connections (partner sessions with access to every organization). */
  @IsOptional() @IsIn(['partner']) scope?: 'partner';
}

export class GroupRoleMappingInputDto {
  /** The IdP group as the IdP sends it: a SCIM group's `displayName`, or a value of the sign-in `groups` claim or attribute. 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() group: string;
  /** A role of the owner (organization role for an organization, partner role for a partner); the caller must hold every permission it grants. */
  @IsUUID() roleId: string;
  /** Restricts the membership to these sites of the organization (organization owners only); absent: every site. */
  @IsOptional() @IsArray() @ArrayMaxSize(100) @ArrayUnique() @IsUUID('all', { each: true }) siteIds?: string[];
}

export class SetGroupRoleMappingsDto {
  /** The whole list, in order (the first entry matching one of the user's groups wins); at most 100. */
  @IsArray() @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => GroupRoleMappingInputDto) mappings: GroupRoleMappingInputDto[];
}

export class GroupRoleMappingDto {
  group: string;
  roleId: Uuid;
  siteIds: Uuid[] | null;
  /** The administrator who saved it: the delegation check is re-run against them whenever it is applied. */
  setBy: Uuid | null;
}

export class GroupRoleMappingListDto {
  success: true;
  mappings: GroupRoleMappingDto[];
}

export class ScimConnectionDto {
  id: Uuid;
  name: string;
  ownerScope: 'organization' | 'partner';
  orgId: Uuid | null;
  partnerId: Uuid | null;
  /** The first 8 characters after `scim_`, to recognise a token without storing it. */
  tokenPrefix: string;
  defaultRoleId: Uuid | null;
  /** The administrator whose authority the token uses: its creator, or whoever last rotated it. */
  actingUserId: Uuid | null;
  createdBy: Uuid | null;
  createdAt: DateTime;
  rotatedAt: DateTime | null;
  revokedAt: DateTime | null;
  lastUsedAt: DateTime | null;
  /** The SCIM base URL to configure in the IdP. */
  baseUrl: string;
}

export class ScimConnectionCreatedDto {
  success: true;
  connection: ScimConnectionDto;
  /** The bearer token `scim_…`, shown only in this response. */
  token: string;
}

export class ScimConnectionResponseDto {
  success: true;
  connection: ScimConnectionDto;
}

export class ScimConnectionListDto {
  success: true;
  connections: ScimConnectionDto[];
}
