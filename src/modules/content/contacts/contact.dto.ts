import { OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsIn, IsObject, IsOptional, IsString, IsUUID, Length, Matches, MaxLength, ValidateNested } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../../common/pagination.dto';
import { CONTACT_LIMITS, PHONE_TYPES, PhoneType } from './contact-fields.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export class ContactPhoneDto {
  @IsIn(PHONE_TYPES) type: PhoneType;
  /** Digits and the usual separators (+ ( ) . - / space x #), 1 to 50 characters. */
  @IsString() @Length(1, CONTACT_LIMITS.phone) @Matches(/^[0-9+().\-/ x#*]+$/, { message: 'number may only contain digits and + ( ) . - / x # *' }) number: string;
}

export class CreateContactDto {
  /** Required for partner-scope callers; an organization session defaults to its organization. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Pins the contact to one site of the organization; absent or null: organization level. */
  @IsOptional() @IsUUID() siteId?: string | null;
  @IsString() @Length(1, CONTACT_LIMITS.name) name: string;
  @IsOptional() @IsEmail() @MaxLength(CONTACT_LIMITS.email) email?: string | null;
  @IsOptional() @IsArray() @ArrayMaxSize(CONTACT_LIMITS.phones) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => ContactPhoneDto) phones?: ContactPhoneDto[];
  @IsOptional() @IsString() @MaxLength(CONTACT_LIMITS.title) title?: string | null;
  @IsOptional() @IsString() @MaxLength(CONTACT_LIMITS.notes) notes?: string | null;
  /** The contact's id in another system; unique within the organization. */
  @IsOptional() @IsString() @Length(1, CONTACT_LIMITS.externalId) externalId?: string | null;
}

export class UpdateContactDto extends PartialType(OmitType(CreateContactDto, ['orgId'] as const)) {}

export class ListContactsQueryDto extends PageQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
  /** Contacts pinned to this site (organization-level contacts are excluded). */
  @IsOptional() @IsUUID() siteId?: string;
  /** Case-insensitive search in name, email and title. */
  @IsOptional() @IsString() @Length(1, 255) q?: string;
  @IsOptional() @IsString() @Length(1, CONTACT_LIMITS.externalId) externalId?: string;
}

export class ContactDto {
  id: Uuid;
  orgId: Uuid;
  siteId: Uuid | null;
  name: string;
  email: string | null;
  phones: ContactPhoneDto[];
  title: string | null;
  notes: string | null;
  externalId: string | null;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class ContactResponseDto {
  success: true;
  contact: ContactDto;
}

export class ContactListDto {
  success: true;
  contacts: ContactDto[];
  pagination: PaginationDto;
}
