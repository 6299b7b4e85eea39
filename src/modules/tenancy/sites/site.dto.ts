import { OmitType, PartialType } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import { IsIanaTimeZone } from './timezone.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export class CreateSiteDto {
  /** Owning organization; defaults to the caller's organization for organization-scope sessions. */
  @IsOptional() @IsUUID() orgId?: string;
  /** 1 to 255 characters, unique within the organization. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  /** IANA time zone name (default UTC). */
  @IsOptional() @IsIanaTimeZone() timezone?: string;
}

export class UpdateSiteDto extends PartialType(OmitType(CreateSiteDto, ['orgId'] as const), { skipNullProperties: false }) {}

export class ListSitesQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
}

export class SiteDto {
  id: Uuid;
  orgId: Uuid;
  name: string;
  timezone: string;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class SiteResponseDto {
  success: true;
  site: SiteDto;
}

export class SiteListDto {
  success: true;
  sites: SiteDto[];
}
