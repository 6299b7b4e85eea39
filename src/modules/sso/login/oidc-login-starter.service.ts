import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { SecretBoxService, SecretDecryptionError } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { callerVisible } from '../../../infra/net/net.errors';
import { clientSecretContext } from '../providers/sso-provider.types';
import { oidcClientConfig, ownerOf } from './login-provider.util';
import { OidcProviderMetadataService } from './oidc-provider-metadata.service';
import { OidcClientConfig, OidcProtocolError, OidcRelyingPartyService } from './oidc-relying-party.service';
import { SsoLoginErrors } from './sso-login.errors';
import type { LoginProviderRow } from './sso-login.repository';
import { LoginSessionService } from '../sign-in/login-session.service';
import type { StartedSignIn } from '../sign-in/sign-in-response.util';
import { CALLBACK_PATH, LOGIN_SESSION_TTL_SECONDS, stateCookieOptions, stateCookieValue } from './state-cookie.util';

export interface AttemptPurpose {
  purpose: 'login' | 'link';
  redirectPath: string;
  linkUserId?: string;
  linkSessionId?: string;
}

/**
 * Starts an OIDC round trip for a provider (login and self-service linking alike): checks
 * the configuration, re-validates the stored endpoints (network, outside any transaction),
 * records the login session bound to the provider's generation, and signs the state.
 */
@Injectable()
export class OidcLoginStarterService {
  private readonly logger = new Logger(OidcLoginStarterService.name);

  constructor(
    private readonly rp: OidcRelyingPartyService,
    private readonly loginSessions: LoginSessionService,
    private readonly tx: TenantTransactionService,
    private readonly box: SecretBoxService,
    private readonly metadata: OidcProviderMetadataService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Spec 1.1.4: {base_url}/api/v1/sso/callback. */
  get redirectUri(): string {
    return `${this.config.publicUrl}${CALLBACK_PATH}`;
  }

  get secureCookies(): boolean {
    return this.config.isProduction;
  }

  /** The provider's client configuration, or null with the fields it lacks. */
  clientConfig(provider: LoginProviderRow): { config: OidcClientConfig } | { missing: string[] } {
    try {
      return oidcClientConfig(provider, (sealed) => this.box.decrypt(sealed, clientSecretContext(provider.id)));
    } catch (error) {
      if (error instanceof SecretDecryptionError) return { missing: ['clientSecret'] };
      throw error;
    }
  }

  async begin(provider: LoginProviderRow, purpose: AttemptPurpose): Promise<StartedSignIn> {
    const client = this.clientConfig(provider);
    if ('missing' in client) throw SsoLoginErrors.incompleteProvider(client.missing);
    try {
      await this.rp.assertEndpointsSafe(client.config);
    } catch (error) {
      if (error instanceof OidcProtocolError) {
        // Public route: whether a stored host now resolves inside, or not at all, stays in the log.
        this.logger.warn({ providerId: provider.id, reason: error.reason }, 'An SSO login start found an endpoint it may not use');
        throw SsoLoginErrors.unsafeEndpoint(callerVisible(error.reason, '').reason);
      }
      throw error;
    }
    // Read before the login session is written: the callback applies what the provider advertised now.
    const { issParameterSupported } = await this.metadata.of(client.config.issuer);
    const attempt = this.rp.newAttempt();
    const { orgId, partnerId } = ownerOf(provider);
    await this.tx.withSystemContext('a public login start records its login session', async () => {
      await this.loginSessions.record({
        orgId,
        partnerId,
        providerId: provider.id,
        state: attempt.state,
        nonce: attempt.nonce,
        codeVerifier: attempt.codeVerifier,
        redirectUrl: purpose.redirectPath,
        generation: provider.generation,
        purpose: purpose.purpose,
        linkUserId: purpose.linkUserId ?? null,
        linkSessionId: purpose.linkSessionId ?? null,
        issRequired: issParameterSupported,
        ttlSeconds: LOGIN_SESSION_TTL_SECONDS,
      });
    });
    return {
      authUrl: this.rp.authorizationUrl(client.config, attempt, this.redirectUri),
      stateCookie: stateCookieValue(this.box, attempt.state),
      cookie: stateCookieOptions(this.secureCookies),
    };
  }
}
