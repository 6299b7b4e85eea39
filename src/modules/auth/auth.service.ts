import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { randomToken, SecretBox, tokenHash } from '../../infra/crypto/secret-box.service';
import { TenantTransaction } from '../../infra/database/tenant-transaction.service';
import type { Principal } from '../../common/principal';
import { AppException } from '../../common/errors/app.exception';
import { AuditService } from '../audit/audit.service';
import { AuthErrors } from './auth.errors';
import { AuthRepository, UserAuthRow } from './auth.repository';
import { MailService } from './mail.service';
import { MfaService } from './mfa.service';
import { PasswordLoginPolicy } from './password-login-policy.service';
import { PasswordService } from './password.service';
import { PrincipalResolver } from './principal-resolver.service';
import { SessionService } from './session.service';
import { TokenService } from './token.service';
import type { MeDto, MfaChallengeDto, MfaEnrollmentDto, SuccessMessageDto, TokenPairDto } from './dto/auth.dto';

const RESET_TOKEN_TTL_SECONDS = 3600;
const FORGOT_MESSAGE = 'If an account exists for that address, a reset link has been sent.';

export const totpContext = (userId: string) => `users.totp_secret:${userId}`;

@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(
    private readonly repo: AuthRepository,
    private readonly tx: TenantTransaction,
    private readonly passwords: PasswordService,
    private readonly mfa: MfaService,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly box: SecretBox,
    private readonly mail: MailService,
    private readonly policy: PasswordLoginPolicy,
    private readonly principals: PrincipalResolver,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Password sign-in. A wrong password, an unknown email and a refusal under SSO enforcement
   * all give the same answer after the same amount of work.
   */
  async login(email: string, password: string): Promise<TokenPairDto | MfaChallengeDto> {
    // The refusal is decided inside the transaction but thrown after it commits, so its audit row stays.
    const outcome = await this.tx.withSystemContext('password sign-in looks the account up by email', async () => {
      const user = await this.repo.userByEmail(email);
      const passwordOk = await this.passwords.verify(user?.password_hash, password);
      if (!user || !passwordOk || user.status !== 'active') return AuthErrors.invalidCredentials();
      if (await this.policy.isSsoEnforced(user.id)) {
        await this.audit.record({ action: 'auth.login.refused_sso_enforced', resourceType: 'user', resourceId: user.id, actor: { type: 'user', id: user.id } });
        return AuthErrors.invalidCredentials();
      }
      if (user.totp_secret) return { mfaRequired: true as const, mfaToken: await this.tokens.signMfaChallenge(user.id) };
      return this.openSession(user, false);
    });
    if (outcome instanceof AppException) throw outcome;
    return outcome;
  }

  verifyMfa(mfaToken: string, code: string): Promise<TokenPairDto> {
    return this.tx.withSystemContext('second sign-in step for an account not yet signed in', async () => {
      const userId = await this.tokens.verifyMfaChallenge(mfaToken);
      if (!userId) throw AuthErrors.invalidMfaToken();
      const user = await this.repo.userById(userId);
      if (!user || user.status !== 'active' || !user.totp_secret) throw AuthErrors.invalidMfaToken();
      await this.checkTotp(user.id, this.box.decrypt(user.totp_secret, totpContext(user.id)), code);
      return this.openSession(user, true);
    });
  }

  enrollMfa(principal: Principal): Promise<MfaEnrollmentDto> {
    return this.tx.withSystemContext('a user reads and writes their own MFA seed', async () => {
      const user = await this.requireUser(principal);
      if (user.totp_secret) throw AuthErrors.mfaAlreadyEnabled();
      const secret = this.mfa.newSecret();
      await this.repo.setPendingTotp(user.id, this.box.encrypt(secret, totpContext(user.id)));
      return { secret, otpauthUrl: this.mfa.otpauthUrl(user.email, secret) };
    });
  }

  /** Activating proves possession of the second factor, so the current session becomes MFA-satisfied. */
  activateMfa(principal: Principal, code: string): Promise<SuccessMessageDto> {
    return this.tx.withSystemContext('a user activates their own MFA seed', async () => {
      const user = await this.requireUser(principal);
      if (user.totp_secret) throw AuthErrors.mfaAlreadyEnabled();
      if (!user.totp_pending_secret) throw AuthErrors.mfaNotPending();
      const secret = this.box.decrypt(user.totp_pending_secret, totpContext(user.id));
      await this.checkTotp(user.id, secret, code);
      await this.repo.activateTotp(user.id, user.totp_pending_secret);
      if (principal.sessionId) {
        await this.repo.markSessionMfa(principal.sessionId);
        this.principals.forgetSession(principal.sessionId);
      }
      await this.audit.record({ action: 'auth.mfa.enabled', resourceType: 'user', resourceId: user.id, orgId: principal.orgId, partnerId: principal.partnerId });
      return { success: true, message: 'Multi-factor authentication is enabled' };
    });
  }

  /** Rotates the refresh token; a rotated token presented again revokes its whole session. */
  async refresh(refreshToken: string): Promise<TokenPairDto> {
    const outcome = await this.tx.withSystemContext('refresh tokens identify their session', async () => {
      const hash = tokenHash(refreshToken);
      const used = await this.repo.consumeRefreshToken(hash);
      if (!used) {
        const known = await this.repo.refreshTokenFamily(hash);
        if (known?.used_at) {
          await this.repo.revokeSession(known.session_id, 'refresh_token_reuse');
          this.principals.forgetSession(known.session_id);
          this.logger.warn(`Refresh token reuse detected: session ${known.session_id} revoked`);
        }
        return AuthErrors.invalidRefreshToken();
      }
      const session = await this.repo.session(used.session_id);
      if (!session) return AuthErrors.invalidRefreshToken();
      return this.sessions.pair(session.id, {
        userId: session.user_id,
        scope: session.scope as 'organization' | 'partner',
        orgId: session.org_id,
        partnerId: session.partner_id,
        mfa: session.mfa,
      });
    });
    if (outcome instanceof AppException) throw outcome;
    return outcome;
  }

  logout(principal: Principal): Promise<SuccessMessageDto> {
    return this.tx.withSystemContext('a user ends their own session', async () => {
      if (principal.sessionId) {
        await this.repo.revokeSession(principal.sessionId, 'logout');
        this.principals.forgetSession(principal.sessionId);
      }
      return { success: true, message: 'Signed out' };
    });
  }

  /** Always the same answer; the mail goes out after the token has committed, off the request path. */
  async forgotPassword(email: string): Promise<SuccessMessageDto> {
    const issued = await this.tx.withSystemContext('password reset looks the account up by email', async () => {
      const user = await this.repo.userByEmail(email);
      if (!user || user.status !== 'active') return null;
      if (await this.policy.isSsoEnforced(user.id)) return null;
      const token = randomToken(32);
      await this.repo.issueResetToken(user.id, tokenHash(token), RESET_TOKEN_TTL_SECONDS);
      return { email: user.email, token };
    });
    if (issued) {
      const link = `${this.config.publicUrl}/reset-password#token=${issued.token}`;
      this.mail
        .send(issued.email, 'Reset your password', `Use this link within one hour to choose a new password:\n\n${link}\n\nIf you did not ask for this, ignore this message.`)
        .catch((err: Error) => this.logger.error(`Password reset mail failed: ${err.message}`));
    }
    return { success: true, message: FORGOT_MESSAGE };
  }

  resetPassword(token: string, password: string): Promise<SuccessMessageDto> {
    return this.tx.withSystemContext('a reset token identifies its account', async () => {
      const row = await this.repo.consumeResetToken(tokenHash(token));
      if (!row || (await this.policy.isSsoEnforced(row.user_id))) throw AuthErrors.invalidResetToken();
      await this.repo.setPassword(row.user_id, await this.passwords.hash(password));
      await this.repo.revokeUserSessions(row.user_id, 'password_reset');
      this.principals.forgetUser(row.user_id);
      return { success: true, message: 'Your password has been changed. Sign in with the new password.' };
    });
  }

  changePassword(principal: Principal, current: string, next: string): Promise<SuccessMessageDto> {
    return this.tx.withSystemContext('a user changes their own password', async () => {
      const user = await this.requireUser(principal);
      if (!(await this.passwords.verify(user.password_hash, current))) throw AuthErrors.wrongPassword();
      await this.repo.setPassword(user.id, await this.passwords.hash(next));
      await this.repo.revokeUserSessions(user.id, 'password_changed', principal.sessionId);
      this.principals.forgetUser(user.id);
      return { success: true, message: 'Password changed; your other sessions were signed out' };
    });
  }

  me(principal: Principal): Promise<MeDto> {
    return this.tx.withSystemContext('a user reads their own account', async () => {
      const user = await this.requireUser(principal);
      return {
        success: true,
        user: { id: user.id, email: user.email, name: user.name, mfaEnabled: !!user.totp_secret },
        session: { scope: principal.scope ?? 'organization', orgId: principal.orgId, partnerId: principal.partnerId, mfa: principal.mfa, permissions: principal.permissions },
      };
    });
  }

  private async openSession(user: UserAuthRow, mfa: boolean): Promise<TokenPairDto> {
    const scope = await this.repo.loginScope(user.id);
    if (!scope) throw AuthErrors.noAccess();
    const pair = await this.sessions.open({ userId: user.id, scope: scope.scope, orgId: scope.org_id, partnerId: scope.partner_id, mfa, authMethod: 'password' });
    await this.audit.record({ action: 'auth.login', orgId: scope.org_id, partnerId: scope.partner_id, resourceType: 'user', resourceId: user.id, actor: { type: 'user', id: user.id }, details: { method: 'password', mfa } });
    return pair;
  }

  private async checkTotp(userId: string, secret: string, code: string): Promise<void> {
    const step = this.mfa.matchingStep(secret, code);
    if (step === null || !(await this.repo.claimTotpStep(userId, step))) throw AuthErrors.invalidMfaCode();
  }

  private async requireUser(principal: Principal): Promise<UserAuthRow> {
    const user = principal.userId ? await this.repo.userById(principal.userId) : null;
    if (!user) throw AuthErrors.invalidCredentials();
    return user;
  }
}
