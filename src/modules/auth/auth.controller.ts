import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import { Auth, CurrentPrincipal, Public } from '../../common/decorators/auth.decorator';
import { RateKey } from '../../common/decorators/rate-key.decorator';
import type { Principal } from '../../common/principal';
import { AuthRateLimits, LOGIN_PER_ADDRESS, MFA_ACTIVATE_PER_ACCOUNT, PASSWORD_CHECK_PER_ACCOUNT } from './auth-rate-limit.guard';
import { AuthService } from './auth.service';
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

// Auth routes open their own system-context transactions, so a refusal can commit its audit row.
const OWN_TX = { transaction: 'none' } as const;

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('login')
  @HttpCode(200)
  @Public(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @RateKey((req) => `login:${req.ip}:${String(req.body?.email ?? '').toLowerCase()}`)
  @AuthRateLimits(LOGIN_PER_ADDRESS)
  login(@Body() dto: LoginDto): Promise<TokenPairDto | MfaChallengeDto> {
    return this.auth.login(dto.email, dto.password);
  }

  @Post('mfa/verify')
  @HttpCode(200)
  @Public(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  verifyMfa(@Body() dto: MfaVerifyDto): Promise<TokenPairDto> {
    return this.auth.verifyMfa(dto.mfaToken, dto.code);
  }

  /** Needs the current password (see MfaEnrollDto); replacing an existing authenticator also needs an MFA session. */
  @Post('mfa/enroll')
  @HttpCode(200)
  @Auth(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @AuthRateLimits(PASSWORD_CHECK_PER_ACCOUNT)
  enrollMfa(@CurrentPrincipal() principal: Principal, @Body() dto: MfaEnrollDto): Promise<MfaEnrollmentDto> {
    return this.auth.enrollMfa(principal, dto.password);
  }

  /** Does not make the current session MFA-satisfied: sign in again with a code for that. */
  @Post('mfa/activate')
  @HttpCode(200)
  @Auth(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @AuthRateLimits(MFA_ACTIVATE_PER_ACCOUNT)
  activateMfa(@CurrentPrincipal() principal: Principal, @Body() dto: MfaActivateDto): Promise<SuccessMessageDto> {
    return this.auth.activateMfa(principal, dto.code);
  }

  @Post('refresh')
  @HttpCode(200)
  @Public(OWN_TX)
  refresh(@Body() dto: RefreshDto): Promise<TokenPairDto> {
    return this.auth.refresh(dto.refreshToken);
  }

  @Post('logout')
  @HttpCode(200)
  @Auth(OWN_TX)
  logout(@CurrentPrincipal() principal: Principal): Promise<SuccessMessageDto> {
    return this.auth.logout(principal);
  }

  @Post('forgot-password')
  @HttpCode(200)
  @Public(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  forgotPassword(@Body() dto: ForgotPasswordDto): Promise<SuccessMessageDto> {
    return this.auth.forgotPassword(dto.email);
  }

  @Post('reset-password')
  @HttpCode(200)
  @Public(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  resetPassword(@Body() dto: ResetPasswordDto): Promise<SuccessMessageDto> {
    return this.auth.resetPassword(dto.token, dto.password);
  }

  @Post('change-password')
  @HttpCode(200)
  @Auth(OWN_TX)
  @Throttle({ default: { limit: 10, ttl: 60_000 } })
  @AuthRateLimits(PASSWORD_CHECK_PER_ACCOUNT)
  changePassword(@CurrentPrincipal() principal: Principal, @Body() dto: ChangePasswordDto): Promise<SuccessMessageDto> {
    return this.auth.changePassword(principal, dto.currentPassword, dto.newPassword);
  }

  @Get('me')
  @Auth(OWN_TX)
  me(@CurrentPrincipal() principal: Principal): Promise<MeDto> {
    return this.auth.me(principal);
  }
}
