import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { randomToken, SecretBoxService, tokenHash } from '../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import type { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { refuse, RefusalService } from '../audit/refusal.service';
import { AfterResponseService } from './after-response.service';
import { AuthErrors } from './auth.errors';
import { AuthRepository, UserAuthRow } from './auth.repository';
import { MailService } from './mail.service';
import { MfaService } from './mfa.service';
import { PasswordLoginPolicyService } from './password-login-policy.service';
import { PasswordService } from '../../infra/crypto/password.service';
import { PrincipalResolverService } from './principal-resolver.service';
import { SessionService } from './session.service';
import type { MeDto, MfaChallengeDto, MfaEnrollmentDto, SuccessMessageDto, TokenPairDto } from './dto/auth.dto';
import { UserCredentialService } from '../tenancy/users/user-credential.service';
import { MetricsService } from '../../infra/metrics/metrics.service';

const RESET_TOKEN_TTL_SECONDS = 3600;
const FORGOT_MESSAGE = 'If an account exists for that address, a reset link has been sent.';
const MFA_CHALLENGE_TTL_SECONDS = 5 * 60;
/** Wrong codes one challenge takes before it is burned (mfa_challenges checks the same bound). */
const MFA_CHALLENGE_ATTEMPTS = 5;
/** Wrong codes one account takes across its challenges issued within the window. */
const MFA_ACCOUNT_WRONG_CODES = 10;
const MFA_ACCOUNT_WINDOW_SECONDS = 15 * 60;
/** How recent the sign-in of a user without a password must be to change MFA settings. */
const RECENT_SIGN_IN_SECONDS = 5 * 60;

export const totpContext = (userId: string) => `users.totp_secret:${userId}`;

@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(
    private readonly repo: AuthRepository,
    private readonly credentials: UserCredentialService,
    private readonly tx: TenantTransactionService,
    private readonly passwords: PasswordService,
    private readonly mfa: MfaService,
    private readonly sessions: SessionService,
    private readonly box: SecretBoxService,
    private readonly mail: MailService,
    private readonly policy: PasswordLoginPolicyService,
    private readonly principals: PrincipalResolverService,
    private readonly audit: AuditService,
    private readonly afterResponse: AfterResponseService,
    private readonly refusals: RefusalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Password sign-in. A wrong password, an unknown email and a refusal under SSO enforcement
   * all give the same answer after the same amount of work.
   */
  login(email: string, password: string): Promise<TokenPairDto | MfaChallengeDto> {
    return this.metrics.countSignIn('password', this.passwordLogin(email, password), (r) => ('mfaRequired' in r ? 'mfa_required' : 'success'));
  }

  private passwordLogin(email: string, password: string): Promise<TokenPairDto | MfaChallengeDto> {
    return this.refusals.withSystemContext('password sign-in looks the account up by email', async () => {
      const user = await this.repo.userByEmail(email);
      const passwordOk = await this.passwords.verify(user?.password_hash, password);
      if (!user || !passwordOk || user.status !== 'active') throw AuthErrors.invalidCredentials();
      if (await this.policy.isSsoEnforced(user.id)) {
        // Recorded in this same transaction (nothing else was written), so this answer costs what the others cost.
        refuse(AuthErrors.invalidCredentials(), {
          keepWork: true,
          audit: { action: 'auth.login.refused_sso_enforced', resourceType: 'user', resourceId: user.id, actor: { type: 'user', id: user.id } },
        });
      }
      if (user.totp_secret) return { mfaRequired: true as const, mfaToken: await this.issueMfaChallenge(user.id) };
      return this.openSession(user, false);
    });
  }

  /**
   * The second sign-in step. The challenge is a row: each wrong code spends one of its five
   * attempts and one of the account's ten per fifteen minutes, whatever address it comes from,
   * and the right code consumes it (compare-and-set), so one challenge opens one session at most.
   * A wrong code is refused with its work kept, so the spent attempts stay spent.
   */
  verifyMfa(mfaToken: string, code: string): Promise<TokenPairDto> {
    const hash = tokenHash(mfaToken);
    const verified = this.refusals.withSystemContext('second sign-in step for an account not yet signed in', async () => {
      const owner = await this.repo.mfaChallengeOwner(hash);
      // The account first, then its challenge: one account's verifications (and password changes) queue on the account row.
      const user = owner ? await this.repo.lockUser(owner) : null;
      const challenge = user ? await this.repo.lockMfaChallenge(hash, MFA_CHALLENGE_ATTEMPTS) : null;
      if (!user || !challenge?.open || user.status !== 'active' || !user.totp_secret) throw AuthErrors.invalidMfaToken();
      const budget = await this.repo.recentWrongMfaCodes(user.id, MFA_ACCOUNT_WINDOW_SECONDS);
      if (budget.wrong >= MFA_ACCOUNT_WRONG_CODES) throw AuthErrors.mfaAccountLimited(budget.retryAfterSeconds);
      const step = this.mfa.matchingStep(this.box.decrypt(user.totp_secret, totpContext(user.id)), code);
      if (step === null || !(await this.credentials.claimTotpStep(user.id, step))) {
        const spent = await this.repo.recordWrongMfaCode(challenge.id, MFA_CHALLENGE_ATTEMPTS);
        const burned = spent === MFA_CHALLENGE_ATTEMPTS;
        refuse(AuthErrors.invalidMfaCode(), {
          keepWork: true,
          audit: burned ? { action: 'auth.mfa.challenge_burned', resourceType: 'user', resourceId: user.id, actor: { type: 'system', id: null }, details: { attempts: spent } } : null,
        });
      }
      if (!(await this.repo.consumeMfaChallenge(challenge.id, MFA_CHALLENGE_ATTEMPTS))) refuse(AuthErrors.invalidMfaToken(), { keepWork: true });
      return this.openSession(user, true);
    });
    return this.metrics.countSignIn('totp', verified);
  }

  /**
   * Starts enrolment, or the replacement of an existing authenticator. An access token alone is
   * not enough: the caller proves the password again (a user without one: a sign-in within the
   * last five minutes), and replacing an authenticator also needs an MFA session. The new seed
   * waits in the pending slot until activation; the session itself never changes.
   */
  enrollMfa(principal: Principal, password: string | undefined): Promise<MfaEnrollmentDto> {
    return this.tx.withSystemContext('a user reads and writes their own MFA seed', async () => {
      const user = await this.requireSessionUser(principal);
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
      const user = await this.requireSessionUser(principal);
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

  /** Rotates the refresh token; a rotated token presented again revokes its whole session (the refusal keeps that work). */
  refresh(refreshToken: string): Promise<TokenPairDto> {
    return this.refusals.withSystemContext('refresh tokens identify their session', async () => {
      const hash = tokenHash(refreshToken);
      const used = await this.repo.consumeRefreshToken(hash);
      if (!used) {
        const known = await this.repo.refreshTokenFamily(hash);
        if (known?.used_at) {
          await this.repo.revokeSession(known.session_id, 'refresh_token_reuse');
          this.principals.forgetSession(known.session_id);
          this.logger.warn(`Refresh token reuse detected: session ${known.session_id} revoked`);
        }
        refuse(AuthErrors.invalidRefreshToken(), { keepWork: true });
      }
      const session = await this.repo.session(used.session_id);
      if (!session) refuse(AuthErrors.invalidRefreshToken(), { keepWork: true });
      return this.sessions.pair(session.id, {
        userId: session.user_id,
        scope: session.scope as 'organization' | 'partner',
        orgId: session.org_id,
        partnerId: session.partner_id,
        mfa: session.mfa,
      });
    });
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
      const user = await this.requireSessionUser(principal);
      if (!(await this.passwords.verify(user.password_hash, current))) throw AuthErrors.wrongPassword();
      await this.credentials.setPassword(user.id, await this.passwords.hash(next));
      await this.endPasswordCredentials(user.id);
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
    const { pair } = await this.sessions.open({ userId: user.id, scope: scope.scope, orgId: scope.org_id, partnerId: scope.partner_id, mfa, authMethod: 'password' });
    await this.audit.record({ action: 'auth.login', orgId: scope.org_id, partnerId: scope.partner_id, resourceType: 'user', resourceId: user.id, actor: { type: 'user', id: user.id }, details: { method: 'password', mfa } });
    return pair;
  }

  private async issueMfaChallenge(userId: string): Promise<string> {
    const token = `mfa_${randomToken(32)}`;
    await this.repo.insertMfaChallenge(userId, tokenHash(token), MFA_CHALLENGE_TTL_SECONDS);
    return token;
  }

  /** What was issued against the old password: open reset links and MFA challenges. */
  private async endPasswordCredentials(userId: string): Promise<void> {
    await this.repo.retireResetTokens(userId);
    await this.repo.deleteMfaChallenges(userId);
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

  /** Account self-service (password, MFA) belongs to the person at a session, never to an API key acting for them. */
  private async requireSessionUser(principal: Principal): Promise<UserAuthRow> {
    if (principal.kind !== 'user' || !principal.sessionId) throw AuthErrors.sessionRequired();
    return this.requireUser(principal);
  }

  private async requireUser(principal: Principal): Promise<UserAuthRow> {
    const user = principal.userId ? await this.repo.userById(principal.userId) : null;
    if (!user) throw AuthErrors.invalidCredentials();
    return user;
  }
}
