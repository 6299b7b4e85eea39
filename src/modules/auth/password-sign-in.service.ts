import { Injectable } from '@nestjs/common';
import { randomToken, SecretBoxService, tokenHash } from '../../infra/crypto/secret-box.service';
import { PasswordService } from '../../infra/crypto/password.service';
import { MetricsService } from '../../infra/metrics/metrics.service';
import { AuditService } from '../audit/audit.service';
import { refuse, RefusalService } from '../audit/refusal.service';
import { UserCredentialService } from '../tenancy/users/user-credential.service';
import { AuthErrors } from './auth.errors';
import { AuthRepository, UserAuthRow } from './auth.repository';
import type { MfaChallengeDto, TokenPairDto } from './dto/auth.dto';
import { MfaService } from './mfa.service';
import { totpContext } from './own-account.util';
import { PasswordLoginPolicyService } from './password-login-policy.service';
import { SessionService } from './session.service';

const MFA_CHALLENGE_TTL_SECONDS = 5 * 60;
/** Wrong codes one challenge takes before it is burned (mfa_challenges checks the same bound). */
const MFA_CHALLENGE_ATTEMPTS = 5;
/** Wrong codes one account takes across its challenges issued within the window. */
const MFA_ACCOUNT_WRONG_CODES = 10;
const MFA_ACCOUNT_WINDOW_SECONDS = 15 * 60;

/** Signing in with a password, and the second step with a code when the account has MFA (POST /auth/login, /auth/mfa/verify). */
@Injectable()
export class PasswordSignInService {
  constructor(
    private readonly repo: AuthRepository,
    private readonly credentials: UserCredentialService,
    private readonly passwords: PasswordService,
    private readonly mfa: MfaService,
    private readonly sessions: SessionService,
    private readonly box: SecretBoxService,
    private readonly policy: PasswordLoginPolicyService,
    private readonly audit: AuditService,
    private readonly refusals: RefusalService,
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
}
