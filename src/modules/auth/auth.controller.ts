import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import { Auth, CurrentPrincipal, Public } from '../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../common/decorators/no-request-transaction.decorator';
import type { Principal } from '../../common/principal';
import { AuthRateLimits, LOGIN_PER_ADDRESS, MFA_ACTIVATE_PER_ACCOUNT, PASSWORD_CHECK_PER_ACCOUNT } from './auth-rate-limit.guard';
import { AccountPasswordService } from './account-password.service';
import { MfaEnrollmentService } from './mfa-enrollment.service';
import { OwnSessionService } from './own-session.service';
import { PasswordSignInService } from './password-sign-in.service';
import {
  ChangePasswordDto,
  ForgotPasswordDto,
  LoginDto,
  MeDto,
  MfaActivateDto,
  MfaChallengeDto,
  MfaEnrollDto,
  MfaEnrollmentDto,
  MfaVerifyDto,
  RefreshDto,
  ResetPasswordDto,
  SuccessMessageDto,
  TokenPairDto,
} from './dto/auth.dto';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';

@ApiTags('auth')
// Auth routes open their own system-context transactions, so a refusal can commit its audit row.
@NoRequestTransaction()
@Controller('auth')
export class AuthController {
  constructor(
    private readonly signIn: PasswordSignInService,
    private readonly enrolment: MfaEnrollmentService,
    private readonly session: OwnSessionService,
    private readonly password: AccountPasswordService,
  ) {}

  /**
   * Signs in with email and password.
   *
   * @remarks Public. Answers the token pair, or, for an account with MFA, `{ mfaRequired: true, mfaToken }` to
   * complete at `POST /auth/mfa/verify`. A wrong password, an unknown email, a disabled account and an account
   * that must sign in through SSO all answer the same 401 `invalid_credentials`. 429 `rate_limited` past 10
   * attempts per minute per (address, email), or 30 per address.
   */
  @Post('login')
  @HttpCode(200)
  @Public()
  @Throttle({ default: { limit: 10, ttl: 60_000, getTracker: (req) => `login:${req.ip}:${String(req.body?.email ?? '').toLowerCase()}` } })
  @AuthRateLimits(LOGIN_PER_ADDRESS)
  @ApiExtraModels(TokenPairDto, MfaChallengeDto)
  @ApiOkResponse({
    description: 'Signed in (the token pair), or, for an account with MFA, the challenge to complete at `POST /auth/mfa/verify`.',
    schema: { oneOf: [{ $ref: getSchemaPath(TokenPairDto) }, { $ref: getSchemaPath(MfaChallengeDto) }] },
  })
  @ApiErrors({ 401: ['invalid_credentials'] })
  login(@Body() dto: LoginDto): Promise<TokenPairDto | MfaChallengeDto> {
    return this.signIn.login(dto.email, dto.password);
  }

  /**
   * Completes a sign-in with a TOTP code and answers the token pair.
   *
   * @remarks Public. Takes the `mfaToken` of `POST /auth/login` and a 6-digit code. 401 `invalid_mfa_code` for a
   * wrong code; 401 `invalid_mfa_token` when the challenge expired (after 5 minutes), was used, or was burned by 5
   * wrong codes: sign in again. 429 `rate_limited` past 10 wrong codes per account in 15 minutes.
   */
  @Post('mfa/verify')
  @HttpCode(200)
  @Public()
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @ApiErrors({ 401: ['invalid_mfa_code', 'invalid_mfa_token'] })
  verifyMfa(@Body() dto: MfaVerifyDto): Promise<TokenPairDto> {
    return this.signIn.verifyMfa(dto.mfaToken, dto.code);
  }

  /**
   * Starts enrolling an authenticator app for the signed-in user.
   *
   * @remarks Answers the TOTP secret and its `otpauth://` URL; confirm with `POST /auth/mfa/activate`. Needs the
   * current password in the body; an account without a password must have signed in within the last 5 minutes
   * (else 403 `recent_sign_in_required`). Replacing an existing authenticator also needs an MFA session (403
   * `mfa_required`). A person's session only: 403 `session_required` for an API key. 429 past 5 password checks
   * per account in 15 minutes.
   */
  @Post('mfa/enroll')
  @HttpCode(200)
  @Auth()
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @AuthRateLimits(PASSWORD_CHECK_PER_ACCOUNT)
  @ApiErrors({ 400: ['invalid_current_password'], 403: ['recent_sign_in_required', 'mfa_required', 'session_required'] })
  enrollMfa(@CurrentPrincipal() principal: Principal, @Body() dto: MfaEnrollDto): Promise<MfaEnrollmentDto> {
    return this.enrolment.enrollMfa(principal, dto.password);
  }

  /**
   * Confirms MFA enrolment with a code from the new authenticator app.
   *
   * @remarks The current session does not become MFA-satisfied: sign in again with a code for that. 400
   * `mfa_not_enrolling` without an enrolment in progress; 401 `invalid_mfa_code` for a wrong code. A person's
   * session only (403 `session_required` for an API key).
   */
  @Post('mfa/activate')
  @HttpCode(200)
  @Auth()
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @AuthRateLimits(MFA_ACTIVATE_PER_ACCOUNT)
  @ApiErrors({ 400: ['mfa_not_enrolling'], 401: ['invalid_mfa_code'], 403: ['session_required'] })
  activateMfa(@CurrentPrincipal() principal: Principal, @Body() dto: MfaActivateDto): Promise<SuccessMessageDto> {
    return this.enrolment.activateMfa(principal, dto.code);
  }

  /**
   * Trades a refresh token for a new token pair.
   *
   * @remarks Public. The refresh token rotates at every use. 401 `invalid_refresh_token` for an unknown, expired
   * or already used token; presenting a rotated token again also ends the whole session.
   */
  @Post('refresh')
  @HttpCode(200)
  @Public()
  @ApiErrors({ 401: ['invalid_refresh_token'] })
  refresh(@Body() dto: RefreshDto): Promise<TokenPairDto> {
    return this.session.refresh(dto.refreshToken);
  }

  /** Signs out: ends the caller's session and the tokens issued for it. */
  @Post('logout')
  @HttpCode(200)
  @Auth()
  logout(@CurrentPrincipal() principal: Principal): Promise<SuccessMessageDto> {
    return this.session.logout(principal);
  }

  /**
   * Asks for a password-reset link by email.
   *
   * @remarks Public. Always answers 200 with the same message, whether or not the account exists; no mail is sent
   * for an account that must sign in through SSO.
   */
  @Post('forgot-password')
  @HttpCode(200)
  @Public()
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  forgotPassword(@Body() dto: ForgotPasswordDto): Promise<SuccessMessageDto> {
    return this.password.forgotPassword(dto.email);
  }

  /**
   * Sets a new password with the token of a reset link.
   *
   * @remarks Public. A link is valid for 1 hour, once, and only the newest link of an account works; the reset
   * ends every session of the account. 400 `invalid_reset_token` otherwise.
   */
  @Post('reset-password')
  @HttpCode(200)
  @Public()
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @ApiErrors({ 400: ['invalid_reset_token'] })
  resetPassword(@Body() dto: ResetPasswordDto): Promise<SuccessMessageDto> {
    return this.password.resetPassword(dto.token, dto.password);
  }

  /**
   * Changes the signed-in user's password; the user's other sessions end.
   *
   * @remarks 400 `invalid_current_password` when the current password is wrong. A person's session only (403
   * `session_required` for an API key). 429 past 5 password checks per account in 15 minutes.
   */
  @Post('change-password')
  @HttpCode(200)
  @Auth()
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @AuthRateLimits(PASSWORD_CHECK_PER_ACCOUNT)
  @ApiErrors({ 400: ['invalid_current_password'], 403: ['session_required'] })
  changePassword(@CurrentPrincipal() principal: Principal, @Body() dto: ChangePasswordDto): Promise<SuccessMessageDto> {
    return this.password.changePassword(principal, dto.currentPassword, dto.newPassword);
  }

  /**
   * The signed-in user and what the current session may do.
   *
   * @remarks Scope, organization or partner, whether the session satisfied MFA, and its permissions.
   */
  @Get('me')
  @Auth()
  me(@CurrentPrincipal() principal: Principal): Promise<MeDto> {
    return this.session.me(principal);
  }
}
