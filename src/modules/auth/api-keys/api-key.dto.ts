import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsISO8601, IsOptional, IsString, IsUUID, Length } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import { IsPermission } from '../../../common/permission-set.util';

export class CreateApiKeyDto {
  /** 1 to 255 characters. */
  @IsString() @Length(1, 255) @NoNul() name: string;
  /**
   * The organization the key is bound to; defaults to the caller's organization for an
   * organization-scope session. A partner-scope caller who omits it creates a partner-wide key.
   */
  @IsOptional() @IsUUID() orgId?: string;
  /** A subset of the caller's own permissions. */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @ArrayUnique() @IsPermission({ each: true }) permissions: string[];
  /** ISO 8601 instant in the future; absent: the key does not expire. */
  @IsOptional() @IsISO8601({ strict: true }) expiresAt?: string;
  /**
   * The key passes MFA-gated routes. Default false: asked for explicitly, never inherited from the
   * creating session. The key loses it if its creator later removes their own MFA.
   */
  @IsOptional() @IsBoolean() mfaSatisfied?: boolean;
}

export class ListApiKeysQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
}

export class ApiKeyDto {
  id: string;
  name: string;
  /** The first 8 characters after `sk_`, to recognise a key without storing it. */
  prefix: string;
  orgId: string | null;
  partnerId: string | null;
  permissions: string[];
  /** True when the creator asked for it (from an MFA-satisfied session): the key then passes MFA-gated routes. */
  mfaSatisfied: boolean;
  createdBy: string | null;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export class ApiKeyCreatedDto {
  success: true;
  apiKey: ApiKeyDto;
  /** The secret, shown only in this response. */
  key: string;
}

export class ApiKeyResponseDto {
  success: true;
  apiKey: ApiKeyDto;
}

export class ApiKeyListDto {
  success: true;
  apiKeys: ApiKeyDto[];
}
