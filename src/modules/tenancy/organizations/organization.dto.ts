import { PartialType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { NoNul } from '../shared/text.util';

export class CreateOrganizationDto {
  /** 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  @IsOptional() @IsIn(['active', 'suspended']) status?: 'active' | 'suspended';
}

export class UpdateOrganizationDto extends PartialType(CreateOrganizationDto) {}

export class OrganizationDto {
  id: string;
  partnerId: string;
  name: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export class OrganizationResponseDto {
  success: true;
  organization: OrganizationDto;
}

export class OrganizationListDto {
  success: true;
  organizations: OrganizationDto[];
}
