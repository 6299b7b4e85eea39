import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-keys/api-key.entity';
import { ApiKeyController } from './api-keys/api-key.controller';
import { ApiKeyRepository } from './api-keys/api-key.repository';
import { ApiKeyService } from './api-keys/api-key.service';
import { AfterResponseService } from './after-response.service';
import { AuthRateLimitGuard } from './auth-rate-limit.guard';
import { AuthController } from './auth.controller';
import { AuthRepository } from './auth.repository';
import { AccountPasswordService } from './account-password.service';
import { MfaEnrollmentService } from './mfa-enrollment.service';
import { OwnSessionService } from './own-session.service';
import { PasswordSignInService } from './password-sign-in.service';
import { MailService } from './mail.service';
import { MfaService } from './mfa.service';
import { PasswordLoginPolicyService } from './password-login-policy.service';
import { PrincipalRepository } from './principal.repository';
import { PrincipalSource } from '../../common/principal-source';
import { PrincipalResolverService } from './principal-resolver.service';
import { SessionService } from './session.service';
import { TokenService } from './token.service';
import { UserAccountsModule } from '../tenancy/users/user-accounts.module';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity]), UserAccountsModule],
  controllers: [AuthController, ApiKeyController],
  providers: [PasswordSignInService, MfaEnrollmentService, OwnSessionService, AccountPasswordService, AuthRepository, AfterResponseService, AuthRateLimitGuard, SessionService, TokenService, MfaService, MailService, PasswordLoginPolicyService, PrincipalRepository, PrincipalResolverService, { provide: PrincipalSource, useExisting: PrincipalResolverService }, ApiKeyService, ApiKeyRepository],
  exports: [PrincipalResolverService, PrincipalSource, SessionService, TokenService, MailService, PasswordLoginPolicyService],
})
export class AuthModule {}
