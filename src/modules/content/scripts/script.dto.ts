import { OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, IsUUID, Length, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../../common/pagination.dto';
import type { OwnerScope } from '../ownership.util';
import { PARAMETER_TYPES, ParameterType, RUN_AS, RunAs, SCRIPT_LANGUAGES, SCRIPT_LIMITS, ScriptLanguage, SEVERITIES, Severity } from './script-shape.util';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

export class ScriptParameterDto {
  /** Letters, digits and _, not starting with a digit; unique (ignoring case) within the script. */
  @IsString() @Length(1, SCRIPT_LIMITS.parameterName) name: string;
  @IsIn(PARAMETER_TYPES) type: ParameterType;
  @IsOptional() @IsBoolean() required?: boolean;
  /** Of the parameter's type; not allowed for required or secret parameters. */
  @IsOptional() default?: string | number | boolean;
  @IsOptional() @IsString() @MaxLength(SCRIPT_LIMITS.parameterDescription) description?: string;
}

/** One exitCode, or an inclusive from..to range, mapped to a severity; entries may not overlap. */
export class ExitCodeSeverityDto {
  @IsOptional() @IsInt() exitCode?: number;
  @IsOptional() @IsInt() from?: number;
  @IsOptional() @IsInt() to?: number;
  @IsIn(SEVERITIES) severity: Severity;
}

export class CreateScriptDto {
  /** partner: available to every organization of the partner (partner-scope session); organization (default): one organization. */
  @IsOptional() @IsIn(['partner', 'organization']) availability?: OwnerScope;
  @IsOptional() @IsUUID() orgId?: string;
  @IsString() @Length(1, 255) name: string;
  @IsOptional() @IsString() @MaxLength(2000) description?: string | null;
  /** Default "General". */
  @IsOptional() @IsString() @Length(1, 100) category?: string;
  @IsIn(SCRIPT_LANGUAGES) language: ScriptLanguage;
  /** Up to 262,144 characters. */
  @IsString() @Length(1, SCRIPT_LIMITS.body) body: string;
  /** Default system. */
  @IsOptional() @IsIn(RUN_AS) runAs?: RunAs;
  /** 1 to 86,400 seconds, default 300. */
  @IsOptional() @IsInt() @Min(1) @Max(86_400) timeoutSeconds?: number;
  @IsOptional() @IsArray() @ArrayMaxSize(SCRIPT_LIMITS.parameters) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => ScriptParameterDto) parameters?: ScriptParameterDto[];
  /** Unmapped codes: 0 is success, anything else error. Up to 100 entries. */
  @IsOptional() @IsArray() @ArrayMaxSize(SCRIPT_LIMITS.mappings) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => ExitCodeSeverityDto) exitCodeSeverityMapping?: ExitCodeSeverityDto[];
}

export class UpdateScriptDto extends PartialType(OmitType(CreateScriptDto, ['availability', 'orgId'] as const)) {}

export class ListScriptsQueryDto extends PageQueryDto {
  /** Scripts available to this organization: the partner-wide ones and its own. */
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsIn(['partner', 'organization']) availability?: OwnerScope;
  @IsOptional() @IsString() @Length(1, 100) category?: string;
  @IsOptional() @IsIn(SCRIPT_LANGUAGES) language?: ScriptLanguage;
  /** Case-insensitive search in the name. */
  @IsOptional() @IsString() @Length(1, 255) q?: string;
}

export class ScriptSummaryDto {
  id: Uuid;
  availability: OwnerScope;
  partnerId: Uuid | null;
  orgId: Uuid | null;
  name: string;
  description: string | null;
  category: string;
  language: ScriptLanguage;
  runAs: RunAs;
  timeoutSeconds: Int;
  parameters: ScriptParameterDto[];
  exitCodeSeverityMapping: ExitCodeSeverityDto[];
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class ScriptDto extends ScriptSummaryDto {
  body: string;
}

export class ScriptResponseDto {
  success: true;
  script: ScriptDto;
}

/** Lists leave the bodies out; GET /scripts/:id has it. */
export class ScriptListDto {
  success: true;
  scripts: ScriptSummaryDto[];
  pagination: PaginationDto;
}
