import { OmitType, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, IsUUID, Length, MaxLength } from 'class-validator';
import { MAX_SIGNER_LENGTH, MAX_SIGNERS } from './signer-list.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const trimEach = ({ value }: { value: unknown }) =>
  Array.isArray(value) ? value.map((entry) => (typeof entry === 'string' ? entry.trim() : entry)) : value;

export class CreateSignerGroupDto {
  /** Owning organization; defaults to the caller's for organization-scope sessions, required for partner scope. */
  @IsOptional() @IsUUID() orgId?: string;
  /** 1 to 255 characters, unique in the organization ignoring case. */
  @Transform(trim) @IsString() @Length(1, 255) name: string;
  /** At most 2000 characters. */
  @IsOptional() @IsString() @MaxLength(2000) description?: string | null;
  /** Code signers: up to 500 entries of at most 255 characters each, trimmed; blanks dropped, duplicates (ignoring case) removed. */
  @Transform(trimEach) @IsArray() @ArrayMaxSize(MAX_SIGNERS) @IsString({ each: true }) @MaxLength(MAX_SIGNER_LENGTH, { each: true }) signers: string[];
}

export class UpdateSignerGroupDto extends PartialType(OmitType(CreateSignerGroupDto, ['orgId'] as const), { skipNullProperties: false }) {}

export class ListSignerGroupsQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
}

export class SignerGroupDto {
  id: Uuid;
  orgId: Uuid;
  name: string;
  description: string | null;
  signers: string[];
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class SignerGroupResponseDto {
  success: true;
  signerGroup: SignerGroupDto;
}

export class SignerGroupListDto {
  success: true;
  signerGroups: SignerGroupDto[];
}
