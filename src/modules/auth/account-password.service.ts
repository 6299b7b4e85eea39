import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { randomToken, tokenHash } from '../../infra/crypto/secret-box.service';
import { PasswordService } from '../../infra/crypto/password.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { UserCredentialService } from '../tenancy/users/user-credential.service';
import { AfterResponseService } from './after-response.service';
import { AuthErrors } from './auth.errors';
import { AuthRepository } from './auth.repository';
import type { SuccessMessageDto } from './dto/auth.dto';
import { MailService } from './mail.service';
import { requireSessionUser } from './own-account.util';
import { PasswordLoginPolicyService } from './password-login-policy.service';
import { PrincipalResolverService } from './principal-resolver.service';

const RESET_TOKEN_TTL_SECONDS = 3600;
const FORGOT_MESSAGE = 'If an account exists for that address, a reset link has been sent.';

/** A person's password: the reset link by mail, its use, and a change while signed in (POST /auth/forgot-password, /auth/reset-password, /auth/change-password). */
@Injectable()
export class AccountPasswordService {
  constructor(
    private readonly repo: AuthRepository,
    private readonly credentials: UserCredentialService,
    private readonly tx: TenantTransactionService,
    private readonly passwords: PasswordService,
    private readonly policy: PasswordLoginPolicyService,
    private readonly principals: PrincipalResolverService,
    private readonly mail: MailService,
    private readonly afterResponse: AfterResponseService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Always the same answer, sent before any per-account work: the lookup, the token and the mail
   * run once the response has left, so neither the answer nor its timing depends on whether the
   * account exists.
   */
  async forgotPassword(email: string): Promise<SuccessMessageDto> {
    this.afterResponse.schedule('password reset request', () => this.issueReset(email));
    return { success: true, message: FORGOT_MESSAGE };
  }

  /** The account's one open reset link (a newer one replaces it), mailed after the token commits. */
  private async issueReset(email: string): Promise<void> {
    const issued = await this.tx.withSystemContext('password reset looks the account up by email', async () => {
      const user = await this.repo.userByEmail(email);
      if (!user || user.status !== 'active') return null;
      if (await this.policy.isSsoEnforced(user.id)) return null;
      const token = randomToken(32);
      await this.repo.issueResetToken(user.id, tokenHash(token), RESET_TOKEN_TTL_SECONDS);
      return { email: user.email, token };
    });
    if (!issued) return;
    const link = `${this.config.publicUrl}/reset-password#token=${issued.token}`;
    await this.mail.send(issued.email, 'Reset your password', `Use this link within one hour to choose a new password:\n\n${link}\n\nIf you did not ask for this, ignore this message.`);
  }

  resetPassword(token: string, password: string): Promise<SuccessMessageDto> {
    return this.tx.withSystemContext('a reset token identifies its account', async () => {
      const row = await this.repo.consumeResetToken(tokenHash(token));
      if (!row || (await this.policy.isSsoEnforced(row.user_id))) throw AuthErrors.invalidResetToken();
      await this.credentials.setPassword(row.user_id, await this.passwords.hash(password));
      await this.endPasswordCredentials(row.user_id);
      await this.repo.revokeUserSessions(row.user_id, 'password_reset');
      this.principals.forgetUser(row.user_id);
      return { success: true, message: 'Your password has been changed. Sign in with the new password.' };
    });
  }

  changePassword(principal: Principal, current: string, next: string): Promise<SuccessMessageDto> {
    return this.tx.withSystemContext('a user changes their own password', async () => {
      const user = await requireSessionUser(this.repo, principal);
      if (!(await this.passwords.verify(user.password_hash, current))) throw AuthErrors.wrongPassword();
      await this.credentials.setPassword(user.id, await this.passwords.hash(next));
      await this.endPasswordCredentials(user.id);
      await this.repo.revokeUserSessions(user.id, 'password_changed', principal.sessionId);
      this.principals.forgetUser(user.id);
      return { success: true, message: 'Password changed; your other sessions were signed out' };
    });
  }

  /** What was issued against the old password: open reset links and MFA challenges. */
  private async endPasswordCredentials(userId: string): Promise<void> {
    await this.repo.retireResetTokens(userId);
    await this.repo.deleteMfaChallenges(userId);
  }
}
