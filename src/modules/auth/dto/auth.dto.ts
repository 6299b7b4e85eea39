import { IsEmail, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import type { Email, Int, Uuid } from '../../../common/openapi/formats';

export class LoginDto {
  @IsEmail() @MaxLength(255) email: string;
  @IsString() @Length(1, 1024) password: string;
}

export class MfaVerifyDto {
  @IsString() @MaxLength(2048) mfaToken: string;
  @IsString() @Matches(/^\d{6}$/, { message: 'code must be 6 digits' }) code: string;
}

export class MfaEnrollDto {
  /** The current password. Required when the account has one; a user without a password must have signed in within the last 5 minutes. */
  @IsOptional() @IsString() @Length(1, 1024) password?: string;
}

export class MfaActivateDto {
  @IsString() @Matches(/^\d{6}$/, { message: 'code must be 6 digits' }) code: string;
}

export class RefreshDto {
  @IsString() @MaxLength(256) refreshToken: string;
}

export class ForgotPasswordDto {
  @IsEmail() @MaxLength(255) email: string;
}

export class ResetPasswordDto {
  @IsString() @MaxLength(256) token: string;
  /** 12 to 256 characters. */
  @IsString() @Length(12, 256) password: string;
}

export class ChangePasswordDto {
  @IsString() @Length(1, 1024) currentPassword: string;
  /** 12 to 256 characters. */
  @IsString() @Length(12, 256) newPassword: string;
}

export class TokenPairDto {
  accessToken: string;
  refreshToken: string;
  expiresInSeconds: Int;
}

export class MfaChallengeDto {
  mfaRequired: true;
  mfaToken: string;
}

export class MfaEnrollmentDto {
  secret: string;
  otpauthUrl: string;
}

export class SuccessMessageDto {
  success: true;
  message: string;
}

export class MeDto {
  success: true;
  user: { id: Uuid; email: Email; name: string; mfaEnabled: boolean };
  session: { scope: string; orgId: Uuid | null; partnerId: Uuid | null; mfa: boolean; permissions: string[] };
}
