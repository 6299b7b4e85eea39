import { Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { tokenHash } from '../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { refuse, RefusalService } from '../audit/refusal.service';
import { AuthErrors } from './auth.errors';
import { AuthRepository } from './auth.repository';
import type { MeDto, SuccessMessageDto, TokenPairDto } from './dto/auth.dto';
import { requireUser } from './own-account.util';
import { PrincipalResolverService } from './principal-resolver.service';
import { SessionService } from './session.service';

/** A signed-in person's own session: its refresh, its end, and who it is (POST /auth/refresh, /auth/logout, GET /auth/me). */
@Injectable()
export class OwnSessionService {
  private readonly logger = new Logger(OwnSessionService.name);

  constructor(
    private readonly repo: AuthRepository,
    private readonly sessions: SessionService,
    private readonly principals: PrincipalResolverService,
    private readonly tx: TenantTransactionService,
    private readonly refusals: RefusalService,
  ) {}

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

  me(principal: Principal): Promise<MeDto> {
    return this.tx.withSystemContext('a user reads their own account', async () => {
      const user = await requireUser(this.repo, principal);
      return {
        success: true,
        user: { id: user.id, email: user.email, name: user.name, mfaEnabled: !!user.totp_secret },
        session: { scope: principal.scope ?? 'organization', orgId: principal.orgId, partnerId: principal.partnerId, mfa: principal.mfa, permissions: principal.permissions },
      };
    });
  }
}
