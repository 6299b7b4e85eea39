import { Injectable } from '@nestjs/common';
import { LoginProviderRow, NewLoginSession, ProviderOwner, SsoLoginRepository } from '../login/sso-login.repository';

/**
 * The sign-in starts' side of the login sessions (`sso_sessions`) and the provider lookups they
 * need, for both protocols, so that the SAML module uses the OIDC module's services and never its
 * repository. Every method runs in the caller's (system-context) transaction.
 */
@Injectable()
export class LoginSessionService {
  constructor(private readonly repo: SsoLoginRepository) {}

  provider(id: string): Promise<LoginProviderRow | null> {
    return this.repo.provider(id);
  }

  /** The provider a tenant's sign-in starts with: its oldest active one. */
  oldestActiveProvider(owner: ProviderOwner): Promise<LoginProviderRow | null> {
    return this.repo.oldestActiveProvider(owner);
  }

  /** The same provider with its SAML columns, in one statement (the SAML start). */
  oldestActiveProviderWithSaml(owner: ProviderOwner): ReturnType<SsoLoginRepository['oldestActiveProviderWithSaml']> {
    return this.repo.oldestActiveProviderWithSaml(owner);
  }

  /**
   * Records the login session of a start (bound to the provider's generation). Expired ones are
   * removed by the periodic clean-up (SsoStateCleanupJob); consuming one checks its expiry.
   */
  record(session: NewLoginSession): Promise<void> {
    return this.repo.insertLoginSession(session);
  }

  /** A bounded sweep of expired login sessions and exchange codes (the periodic clean-up). */
  async sweepExpired(): Promise<void> {
    await this.repo.sweepExpiredLoginSessions();
    await this.repo.sweepExpiredExchangeCodes();
  }
}
