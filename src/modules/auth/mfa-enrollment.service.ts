import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { SecretBoxService } from '../../infra/crypto/secret-box.service';
import { PasswordService } from '../../infra/crypto/password.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { AuditService } from '../audit/audit.service';
import { UserCredentialService } from '../tenancy/users/user-credential.service';
import { AuthErrors } from './auth.errors';
import { AuthRepository, UserAuthRow } from './auth.repository';
import type { MfaEnrollmentDto, SuccessMessageDto } from './dto/auth.dto';
import { MailService } from './mail.service';
import { MfaService } from './mfa.service';
import { requireSessionUser, totpContext } from './own-account.util';

/** How recent the sign-in of a user without a password must be to change MFA settings. */
const RECENT_SIGN_IN_SECONDS = 5 * 60;

/** A person turning on or replacing their authenticator app (POST /auth/mfa/enroll, /auth/mfa/activate). */
@Injectable()
export class MfaEnrollmentService {
  private readonly logger = new Logger(MfaEnrollmentService.name);

  constructor(
    private readonly repo: AuthRepository,
    private readonly credentials: UserCredentialService,
    private readonly tx: TenantTransactionService,
    private readonly passwords: PasswordService,
    private readonly mfa: MfaService,
    private readonly box: SecretBoxService,
    private readonly mail: MailService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Starts enrolment, or the replacement of an existing authenticator. An access token alone is
   * not enough: the caller proves the password again (a user without one: a sign-in within the
   * last five minutes), and replacing an authenticator also needs an MFA session. The new seed
   * waits in the pending slot until activation; the session itself never changes.
   */
  enrollMfa(principal: Principal, password: string | undefined): Promise<MfaEnrollmentDto> {
    return this.tx.withSystemContext('a user reads and writes their own MFA seed', async () => {
      const user = await requireSessionUser(this.repo, principal);
      const replacing = !!user.totp_secret;
      // Checked before the password, so a stolen password-only token learns nothing about the password here.
      if (replacing && !principal.mfa) throw AuthErrors.mfaRequired();
      await this.reauthenticate(principal, user, password);
      const secret = this.mfa.newSecret();
      await this.credentials.setPendingTotp(user.id, this.box.encrypt(secret, totpContext(user.id)));
      await this.audit.record({ action: 'auth.mfa.enroll', resourceType: 'user', resourceId: user.id, orgId: principal.orgId, partnerId: principal.partnerId, details: { replacing } });
      return { secret, otpauthUrl: this.mfa.otpauthUrl(user.email, secret) };
    });
  }

  /**
   * Proves possession of the pending seed and makes it the account's authenticator. The current
   * session stays as it was (a password-only session stays password-only): MFA sessions come
   * only from signing in with the code. The account holder is told by mail after the commit.
   */
  async activateMfa(principal: Principal, code: string): Promise<SuccessMessageDto> {
    const done = await this.tx.withSystemContext('a user activates their own MFA seed', async () => {
      const user = await requireSessionUser(this.repo, principal);
      if (!user.totp_pending_secret) throw AuthErrors.mfaNotPending();
      const replacing = !!user.totp_secret;
      if (replacing && !principal.mfa) throw AuthErrors.mfaRequired();
      await this.checkTotp(user.id, this.box.decrypt(user.totp_pending_secret, totpContext(user.id)), code);
      await this.credentials.activateTotp(user.id, user.totp_pending_secret);
      await this.audit.record({ action: 'auth.mfa.activate', resourceType: 'user', resourceId: user.id, orgId: principal.orgId, partnerId: principal.partnerId, details: { replacing } });
      return { email: user.email, replacing };
    });
    const what = done.replacing ? 'The authenticator app of your account was replaced' : 'Multi-factor authentication was turned on for your account';
    this.mail
      .send(done.email, what, `${what} at ${new Date().toISOString()}: signing in now needs a code from the new authenticator app.\n\nIf this was not you, reset your password and contact your administrator.`)
      .catch((err: Error) => this.logger.error(`MFA notice mail failed: ${err.message}`));
    return { success: true, message: 'Multi-factor authentication is enabled; sign in again to use it' };
  }

  /** The current password again, or for a user without one, a sign-in within RECENT_SIGN_IN_SECONDS. */
  private async reauthenticate(principal: Principal, user: UserAuthRow, password: string | undefined): Promise<void> {
    if (user.password_hash) {
      if (!password || !(await this.passwords.verify(user.password_hash, password))) throw AuthErrors.wrongPassword();
      return;
    }
    const age = principal.sessionId ? await this.repo.sessionAgeSeconds(principal.sessionId) : null;
    if (age === null || age > RECENT_SIGN_IN_SECONDS) throw AuthErrors.recentSignInRequired();
  }

  private async checkTotp(userId: string, secret: string, code: string): Promise<void> {
    const step = this.mfa.matchingStep(secret, code);
    if (step === null || !(await this.credentials.claimTotpStep(userId, step))) throw AuthErrors.invalidMfaCode();
  }
}
