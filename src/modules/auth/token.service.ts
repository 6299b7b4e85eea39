import { Inject, Injectable } from '@nestjs/common';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import type { SessionScope } from '../../common/principal';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const REFRESH_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
const ISSUER = 'rmm-identity';
const AUDIENCE = 'rmm-api';

export interface AccessClaims {
  sub: string;
  sid: string;
  scope: SessionScope;
  orgId: string | null;
  partnerId: string | null;
  mfa: boolean;
}

/** Our own JWTs (HS256 with JWT_SECRET, distinct from the encryption key), via jose. */
@Injectable()
export class TokenService {
  private readonly key: Uint8Array;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = new TextEncoder().encode(config.jwtSecret);
  }

  signAccess(c: AccessClaims): Promise<string> {
    return new SignJWT({ sid: c.sid, scope: c.scope, orgId: c.orgId, partnerId: c.partnerId, mfa: c.mfa, typ: 'access' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(c.sub)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${ACCESS_TOKEN_TTL_SECONDS}s`)
      .sign(this.key);
  }

  async verifyAccess(token: string): Promise<AccessClaims | null> {
    const payload = await this.verify(token, 'access');
    if (!payload || typeof payload.sid !== 'string' || typeof payload.sub !== 'string') return null;
    return {
      sub: payload.sub,
      sid: payload.sid,
      scope: payload.scope as SessionScope,
      orgId: (payload.orgId as string | null) ?? null,
      partnerId: (payload.partnerId as string | null) ?? null,
      mfa: payload.mfa === true,
    };
  }

  private async verify(token: string, typ: string) {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE, clockTolerance: 5 });
      return payload.typ === typ ? payload : null;
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return null;
      throw e;
    }
  }
}
