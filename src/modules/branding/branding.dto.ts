import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, Matches, ValidateBy, ValidationOptions } from 'class-validator';
import { logoUrlProblem } from './logo.util';

export const HEADLINE_MAX_CHARS = 120;

/** Characters as PostgreSQL's varchar(120) counts them (code points), so the API and the column agree. */
export function headlineProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'headline must be a string';
  if (value.includes('\u0000')) return 'headline must not contain NUL characters';
  if ([...value].length > HEADLINE_MAX_CHARS) return `headline must be at most ${HEADLINE_MAX_CHARS} characters`;
  return null;
}

function IsLogoUrl(options?: ValidationOptions): PropertyDecorator {
  const problem = (value: unknown) => (typeof value === 'string' ? logoUrlProblem(value) : 'logoUrl must be a string');
  return ValidateBy({ name: 'isLogoUrl', validator: { validate: (v) => problem(v) === null, defaultMessage: (a) => problem(a?.value) ?? '' } }, options);
}

function IsHeadline(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isHeadline', validator: { validate: (v) => headlineProblem(v) === null, defaultMessage: (a) => headlineProblem(a?.value) ?? '' } }, options);
}

/** PUT body: a full replace, so an omitted or null field clears that part of the branding. */
export class ReplaceLoginBrandingDto {
  /**
   * An https:// URL (at most 2048 characters), or a base64 data URI of a PNG, JPEG or WebP image
   * (data:image/png;base64,…) of at most 256 KiB decoded, whose bytes are really that type. SVG is refused.
   */
  @IsOptional() @IsLogoUrl() logoUrl?: string | null;

  /** #rrggbb; stored lower-case. */
  @IsOptional() @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'accentColor must be a #rrggbb hex colour' }) accentColor?: string | null;

  /** Free text, at most 120 characters; an empty string clears it. */
  @ApiProperty({ type: String, maxLength: HEADLINE_MAX_CHARS }) @IsOptional() @IsHeadline() headline?: string | null;
}

export class LoginBrandingDto {
  logoUrl: string | null;
  accentColor: string | null;
  headline: string | null;
}

export class LoginBrandingResponseDto {
  success: true;
  branding: LoginBrandingDto;
}
