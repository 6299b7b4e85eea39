import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsEmail, IsIn, IsOptional, IsString, IsUUID, Length, MaxLength, ValidateIf } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import { PageQueryDto, PaginationDto } from '../../../common/pagination.dto';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

/** A non-empty list of distinct site or organization ids. */
const IdList = () => applyDecorators(IsArray(), ArrayMinSize(1), ArrayMaxSize(1000), ArrayUnique(), IsUUID('all', { each: true }));

export class ListUsersQueryDto extends PageQueryDto {
  /** Only members of this organization. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Case-insensitive substring of the email or name. */
  @IsOptional() @IsString() @Length(1, 255) @NoNul() search?: string;
}

export class CreateUserDto {
  @IsEmail() @MaxLength(255) email: string;
  /** 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  /** 12 to 256 characters; absent for a user who signs in through SSO or a reset link. */
  @IsOptional() @IsString() @Length(12, 256) password?: string;
  /** Organization of the first membership; defaults to the caller's organization for organization-scope sessions. */
  @IsOptional() @IsUUID() orgId?: string;
  /** An organization role of that organization. */
  @IsUUID() roleId: string;
  /** Restricts the membership to these sites of the organization; absent or null: every site. */
  @ValidateIf((_, v) => v !== undefined && v !== null) @IdList() siteIds?: string[] | null;
}

export class CreateMembershipDto {
  @IsUUID() orgId: string;
  /** An organization role of that organization. */
  @IsUUID() roleId: string;
  /** Restricts the membership to these sites; absent or null: every site. */
  @ValidateIf((_, v) => v !== undefined && v !== null) @IdList() siteIds?: string[] | null;
}

export class UpdateMembershipDto {
  @ValidateIf((_, v) => v !== undefined) @IsUUID() roleId?: string;
  /** Absent: unchanged; null: every site; a list: only those sites. */
  @ValidateIf((_, v) => v !== undefined && v !== null) @IdList() siteIds?: string[] | null;
}

export class CreatePartnerMembershipDto {
  /** An existing user visible to the caller; otherwise give email and name to create one. */
  @IsOptional() @IsUUID() userId?: string;
  @IsOptional() @IsEmail() @MaxLength(255) email?: string;
  @IsOptional() @IsString() @Length(1, 255) @NoNul() name?: string;
  /** 12 to 256 characters, for a new user only. */
  @IsOptional() @IsString() @Length(12, 256) password?: string;
  /** A partner role of the caller's partner. */
  @IsUUID() roleId: string;
  /** all: every organization of the partner, present and future; selected: orgIds only. */
  @IsIn(['all', 'selected']) orgAccess: 'all' | 'selected';
  /** Required with orgAccess selected, refused with all. */
  @IsOptional() @IdList() orgIds?: string[];
  /** Restricts the technician to these sites; absent: every site of the organizations granted. */
  @IsOptional() @IdList() siteIds?: string[];
}

export class MembershipDto {
  orgId: Uuid;
  roleId: Uuid;
  /** null: every site of the organization. */
  siteIds: Uuid[] | null;
  createdAt: DateTime;
}

export class PartnerMembershipDto {
  partnerId: Uuid;
  roleId: Uuid;
  orgAccess: 'all' | 'selected';
  /** The organizations granted when orgAccess is selected; null for all. */
  orgIds: Uuid[] | null;
  /** null: every site of the organizations granted. */
  siteIds: Uuid[] | null;
  createdAt: DateTime;
}

export class UserDto {
  id: Uuid;
  email: string;
  name: string;
  @ApiProperty({ enum: ['active', 'disabled'] }) status: string;
  mfaEnabled: boolean;
  /** Memberships in the organizations the caller can reach. */
  memberships: MembershipDto[];
  /** The partner membership, when the user is a technician of the caller's partner. */
  partnerMembership: PartnerMembershipDto | null;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class UserResponseDto {
  success: true;
  user: UserDto;
}

export class UserListDto {
  success: true;
  users: UserDto[];
  pagination: PaginationDto;
}
