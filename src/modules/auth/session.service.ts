import { Injectable } from '@nestjs/common';
import { randomToken, tokenHash } from '../../infra/crypto/secret-box.service';
import { AuthRepository } from './auth.repository';
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS, TokenService } from './token.service';
import type { TokenPairDto } from './dto/auth.dto';

export interface NewSession {
  userId: string;
  scope: 'organization' | 'partner';
  orgId: string | null;
  partnerId: string | null;
  mfa: boolean;
  authMethod: 'password' | 'sso';
  ssoProviderId?: string | null;
}

type SessionClaims = Pick<NewSession, 'userId' | 'scope' | 'orgId' | 'partnerId' | 'mfa'>;

const newRefreshToken = (): string => `rt_${randomToken(32)}`;

export interface OpenedSession {
  sessionId: string;
  pair: TokenPairDto;
}

/**
 * Sessions and their token pairs. Must run inside a transaction (the caller's), so a session is
 * written together with whatever else the sign-in records.
 */
@Injectable()
export class SessionService {
  constructor(
    private readonly repo: AuthRepository,
    private readonly tokens: TokenService,
  ) {}

  /**
   * The new session's id with its first token pair, so the caller can refer to the session without
   * reading its own token. The session and its refresh token are written in one statement.
   */
  async open(s: NewSession): Promise<OpenedSession> {
    const refreshToken = newRefreshToken();
    const sessionId = await this.repo.createSession({ ...s, ttlSeconds: REFRESH_TOKEN_TTL_SECONDS }, { hash: tokenHash(refreshToken), ttlSeconds: REFRESH_TOKEN_TTL_SECONDS });
    return { sessionId, pair: await this.signed(sessionId, s, refreshToken) };
  }

  /** A further token pair of a live session (refresh rotation). */
  async pair(sessionId: string, s: SessionClaims): Promise<TokenPairDto> {
    const refreshToken = newRefreshToken();
    await this.repo.insertRefreshToken(sessionId, s.userId, tokenHash(refreshToken), REFRESH_TOKEN_TTL_SECONDS);
    return this.signed(sessionId, s, refreshToken);
  }

  private async signed(sessionId: string, s: SessionClaims, refreshToken: string): Promise<TokenPairDto> {
    const accessToken = await this.tokens.signAccess({ sub: s.userId, sid: sessionId, scope: s.scope, orgId: s.orgId, partnerId: s.partnerId, mfa: s.mfa });
    return { accessToken, refreshToken, expiresInSeconds: ACCESS_TOKEN_TTL_SECONDS };
  }

  /**
   * Ends the live sessions an SSO provider minted and their refresh tokens, in the caller's
   * transaction (system context: other users' sessions). Returns the ended sessions.
   */
  endMintedBy(providerId: string, reason: string): Promise<{ id: string; user_id: string }[]> {
    return this.repo.endSessionsMintedBy(providerId, reason);
  }

  /**
   * Ends the given sessions (revoked, their unused refresh tokens expired now, so a later refresh is
   * simply invalid), in the caller's transaction. Returns the sessions that were live.
   */
  async end(sessionIds: string[], reason: string): Promise<{ id: string; user_id: string }[]> {
    if (sessionIds.length === 0) return [];
    return this.repo.endSessions(sessionIds, reason);
  }
}
