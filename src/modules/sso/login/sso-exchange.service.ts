import { Injectable } from '@nestjs/common';
import { randomToken, SecretBoxService, tokenHash } from '../../../infra/crypto/secret-box.service';
import { refuse, RefusalService } from '../../audit/refusal.service';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../auth/token.service';
import type { TokenPairDto } from '../../auth/dto/auth.dto';
import { SsoLoginErrors } from './sso-login.errors';
import { SsoLoginRepository } from './sso-login.repository';

/** Spec 8: the one-time exchange code lives 2 minutes. */
export const EXCHANGE_CODE_TTL_SECONDS = 120;

const tokensContext = (codeHash: string) => `sso_exchange_codes.tokens:${codeHash}`;

/**
 * The one-time code that carries a finished SSO sign-in from the callback redirect (URL
 * fragment) to the frontend's POST /sso/exchange (spec 1.1.15–16). Stored as a hash, with
 * the token pair sealed, in PostgreSQL, so any instance can redeem it, and only once.
 */
@Injectable()
export class SsoExchangeService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly box: SecretBoxService,
    private readonly refusals: RefusalService,
  ) {}

  /**
   * Inside the sign-in transaction: the code exists exactly when the session does. Expired codes
   * are removed by the periodic clean-up (SsoStateCleanupJob); redeem refuses one whatever is left.
   */
  async issue(input: { orgId: string | null; partnerId: string | null; sessionId: string; userId: string; pair: TokenPairDto }): Promise<string> {
    const code = randomToken(32);
    const codeHash = tokenHash(code);
    await this.repo.insertExchangeCode({
      orgId: input.orgId,
      partnerId: input.partnerId,
      codeHash,
      sessionId: input.sessionId,
      userId: input.userId,
      tokensSealed: this.box.encrypt(JSON.stringify({ accessToken: input.pair.accessToken, refreshToken: input.pair.refreshToken }), tokensContext(codeHash)),
      ttlSeconds: EXCHANGE_CODE_TTL_SECONDS,
    });
    return code;
  }

  /** A refused code stays consumed (the refusal keeps its work): it never answers twice. */
  redeem(code: string): Promise<TokenPairDto> {
    return this.refusals.withSystemContext('an exchange code names its own sign-in', async () => {
      const codeHash = tokenHash(code);
      const row = await this.repo.consumeExchangeCode(codeHash);
      if (!row) throw SsoLoginErrors.invalidExchangeCode();
      const refusal = !row.fresh ? 'exchange_code_expired' : !row.session_live ? 'session_ended' : null;
      if (refusal) {
        refuse(SsoLoginErrors.invalidExchangeCode(), {
          keepWork: true,
          audit: {
            action: 'sso.exchange.rejected',
            orgId: row.org_id,
            partnerId: row.partner_id,
            resourceType: 'session',
            resourceId: row.session_id,
            actor: { type: 'system', id: null },
            details: { reason: refusal },
          },
        });
      }
      const tokens = JSON.parse(this.box.decrypt(row.tokens, tokensContext(codeHash))) as { accessToken: string; refreshToken: string };
      // The access token was signed at the callback; say how much of its life is left.
      return { ...tokens, expiresInSeconds: Math.max(0, ACCESS_TOKEN_TTL_SECONDS - Math.ceil(row.age_seconds)) };
    });
  }
}
