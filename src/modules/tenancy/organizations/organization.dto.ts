import { ApiProperty, PartialType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

const ORGANIZATION_STATUSES = ['active', 'suspended'] as const;

export class CreateOrganizationDto {
  /** 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  @IsOptional() @IsIn(ORGANIZATION_STATUSES) status?: (typeof ORGANIZATION_STATUSES)[number];
}

export class UpdateOrganizationDto extends PartialType(CreateOrganizationDto) {}

export class OrganizationDto {
  id: Uuid;
  partnerId: Uuid;
  name: string;
  @ApiProperty({ enum: ORGANIZATION_STATUSES }) status: string;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class OrganizationResponseDto {
  success: true;
  organization: OrganizationDto;
}

export class OrganizationListDto {
  success: true;
  organizations: OrganizationDto[];
}
