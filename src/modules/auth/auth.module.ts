import { Module } from '@nestjs/common';
import { ApiKeyController } from './api-keys/api-key.controller';
import { ApiKeyRepository } from './api-keys/api-key.repository';
import { ApiKeyService } from './api-keys/api-key.service';
import { AfterResponseService } from './after-response.service';
import { AuthRateLimitGuard } from './auth-rate-limit.guard';
import { AuthController } from './auth.controller';
import { AuthRepository } from './auth.repository';
import { AuthService } from './auth.service';
import { MailService } from './mail.service';
import { MfaService } from './mfa.service';
import { PasswordLoginPolicy } from './password-login-policy.service';
import { PasswordService } from './password.service';
import { PrincipalRepository } from './principal.repository';
import { PrincipalResolver } from './principal-resolver.service';
import { SessionService } from './session.service';
import { TokenService } from './token.service';

@Module({
  controllers: [AuthController, ApiKeyController],
  providers: [AuthService, AuthRepository, AfterResponseService, AuthRateLimitGuard, SessionService, TokenService, PasswordService, MfaService, MailService, PasswordLoginPolicy, PrincipalRepository, PrincipalResolver, ApiKeyService, ApiKeyRepository],
  exports: [PrincipalResolver, SessionService, TokenService, PasswordService, MailService, PasswordLoginPolicy, AuthRepository],
})
export class AuthModule {}
