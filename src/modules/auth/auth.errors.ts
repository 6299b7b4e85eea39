import { HttpStatus } from '@nestjs/common';
import { AppException } from '../../common/errors/app.exception';

export const AuthErrors = {
  invalidCredentials: () => new AppException(HttpStatus.UNAUTHORIZED, 'invalid_credentials', 'Invalid email or password'),
  invalidMfaCode: () => new AppException(HttpStatus.UNAUTHORIZED, 'invalid_mfa_code', 'Invalid or expired verification code'),
  invalidMfaToken: () => new AppException(HttpStatus.UNAUTHORIZED, 'invalid_mfa_token', 'The sign-in step has expired, sign in again'),
  invalidRefreshToken: () => new AppException(HttpStatus.UNAUTHORIZED, 'invalid_refresh_token', 'Invalid or expired refresh token'),
  invalidResetToken: () => new AppException(HttpStatus.BAD_REQUEST, 'invalid_reset_token', 'Invalid or expired password reset link'),
  mfaNotPending: () => new AppException(HttpStatus.BAD_REQUEST, 'mfa_not_enrolling', 'Start MFA enrolment first'),
  mfaAlreadyEnabled: () => new AppException(HttpStatus.CONFLICT, 'mfa_already_enabled', 'MFA is already enabled for this account'),
  wrongPassword: () => new AppException(HttpStatus.BAD_REQUEST, 'invalid_current_password', 'The current password is not correct'),
  noAccess: () => new AppException(HttpStatus.UNAUTHORIZED, 'invalid_credentials', 'Invalid email or password'),
};
