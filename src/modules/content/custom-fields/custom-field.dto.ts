import { OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsNumber, IsOptional, IsString, IsUUID, Length, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import type { OwnerScope } from '../ownership.util';
import { CUSTOM_FIELD_KEY, CUSTOM_FIELD_LIMITS, CUSTOM_FIELD_TYPES, CustomFieldType, CustomFieldValue } from './custom-field-value.util';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export class CustomFieldValidationDto {
  /** text fields: maximum length, 1 to 10,000. */
  @IsOptional() @IsInt() @Min(1) @Max(CUSTOM_FIELD_LIMITS.textLength) maxLength?: number;
  /** number fields: inclusive lower bound. */
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) min?: number;
  /** number fields: inclusive upper bound. */
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) max?: number;
  /** number fields: whole numbers only. */
  @IsOptional() @IsBoolean() integer?: boolean;
}

export class CreateCustomFieldDto {
  /** partner: a partner-wide field of every organization (partner-scope session); organization (default): one organization's. */
  @IsOptional() @IsIn(['partner', 'organization']) scope?: OwnerScope;
  /** The owning organization; required from partner-scope callers for an organization field. */
  @IsOptional() @IsUUID() orgId?: string;
  /** Machine name, unique among the fields an organization sees: a-z, 0-9 and _, starting with a letter, up to 64. Immutable. */
  @IsString() @Matches(CUSTOM_FIELD_KEY, { message: 'key must be 1 to 64 of a-z, 0-9 and _, starting with a letter' }) key: string;
  @IsString() @Length(1, 255) name: string;
  @IsOptional() @IsString() @MaxLength(1000) description?: string | null;
  /** Immutable once created. */
  @IsIn(CUSTOM_FIELD_TYPES) type: CustomFieldType;
  /** Choices of a single_select or multi_select field (1 to 200, unique ignoring case). */
  @IsOptional() @IsArray() @ArrayMaxSize(CUSTOM_FIELD_LIMITS.options) @IsString({ each: true }) @Length(1, CUSTOM_FIELD_LIMITS.optionLength, { each: true }) options?: string[];
  @IsOptional() @ValidateNested() @Type(() => CustomFieldValidationDto) validation?: CustomFieldValidationDto;
}

export class UpdateCustomFieldDto extends PartialType(OmitType(CreateCustomFieldDto, ['scope', 'orgId', 'key', 'type'] as const)) {}

export class ListCustomFieldsQueryDto {
  /** Fields that apply to this organization: the partner-wide ones and its own. */
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsIn(['partner', 'organization']) scope?: OwnerScope;
}

export class CustomFieldDto {
  id: Uuid;
  scope: OwnerScope;
  partnerId: Uuid | null;
  orgId: Uuid | null;
  key: string;
  name: string;
  description: string | null;
  type: CustomFieldType;
  options: string[];
  validation: CustomFieldValidationDto;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class CustomFieldResponseDto {
  success: true;
  customField: CustomFieldDto;
}

export class CustomFieldListDto {
  success: true;
  customFields: CustomFieldDto[];
}

export class SetCustomFieldValueDto {
  /** Typed per the definition: string (text, date YYYY-MM-DD, single_select), number, boolean, or an array of options (multi_select). */
  @IsDefined() value: CustomFieldValue;
}

export class DeviceCustomFieldValueDto {
  definitionId: Uuid;
  key: string;
  name: string;
  type: CustomFieldType;
  value: CustomFieldValue;
  updatedAt: DateTime;
}

export class DeviceCustomFieldValueResponseDto {
  success: true;
  value: DeviceCustomFieldValueDto;
}

export class DeviceCustomFieldValuesDto {
  success: true;
  deviceId: Uuid;
  values: DeviceCustomFieldValueDto[];
}
