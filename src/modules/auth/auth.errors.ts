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
  mfaAccountLimited: (retryAfter: number) => new AppException(HttpStatus.TOO_MANY_REQUESTS, 'rate_limited', 'Too many requests, slow down', { retryAfter }),
  mfaRequired: () => new AppException(HttpStatus.FORBIDDEN, 'mfa_required', 'Multi-factor authentication is required for this action'),
  recentSignInRequired: () => new AppException(HttpStatus.FORBIDDEN, 'recent_sign_in_required', 'Sign in again to change multi-factor settings'),
  sessionRequired: () => new AppException(HttpStatus.FORBIDDEN, 'session_required', 'This action needs a signed-in user, not an API key'),
};
