import { Module } from '@nestjs/common';
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
  controllers: [AuthController],
  providers: [AuthService, AuthRepository, SessionService, TokenService, PasswordService, MfaService, MailService, PasswordLoginPolicy, PrincipalRepository, PrincipalResolver],
  exports: [PrincipalResolver, SessionService, TokenService, PasswordService, MailService, PasswordLoginPolicy, AuthRepository],
})
export class AuthModule {}
