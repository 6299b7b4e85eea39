import { createSecretKey, type KeyObject } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import type { SessionScope } from '../../common/principal';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const REFRESH_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
const ISSUER = 'rmm-identity';
const AUDIENCE = 'rmm-api';
const CLOCK_TOLERANCE_SECONDS = 5;

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
  /** Imported once: jose would import a raw secret anew on every sign and verify. */
  private readonly key: KeyObject;
  /**
   * Access tokens already verified, with their claims, until they expire. A token's claims never
   * change, so a console's next call skips the HMAC and the claim checks; whether its session still
   * stands is the principal resolver's question, asked on every call as before. Bounded: a flood of
   * distinct valid tokens evicts the oldest, it cannot grow the process.
   */
  private readonly verified = new LRUCache<string, { claims: AccessClaims; usableUntilMs: number }>({ max: 10_000 });

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = createSecretKey(Buffer.from(config.jwtSecret, 'utf8'));
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
    const hit = this.verified.get(token);
    if (hit) {
      if (Date.now() < hit.usableUntilMs) return hit.claims;
      this.verified.delete(token);
    }
    const payload = await this.verify(token, 'access');
    if (!payload || typeof payload.sid !== 'string' || typeof payload.sub !== 'string') return null;
    const claims: AccessClaims = {
      sub: payload.sub,
      sid: payload.sid,
      scope: payload.scope as SessionScope,
      orgId: (payload.orgId as string | null) ?? null,
      partnerId: (payload.partnerId as string | null) ?? null,
      mfa: payload.mfa === true,
    };
    // jose accepted it up to exp + the clock tolerance; the cache keeps to the same bound.
    if (typeof payload.exp === 'number') this.verified.set(token, { claims, usableUntilMs: (payload.exp + CLOCK_TOLERANCE_SECONDS) * 1000 });
    return claims;
  }

  private async verify(token: string, typ: string) {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE, clockTolerance: CLOCK_TOLERANCE_SECONDS });
      return payload.typ === typ ? payload : null;
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return null;
      throw e;
    }
  }
}
