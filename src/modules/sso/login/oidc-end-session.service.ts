import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { SecretBoxService, SecretDecryptionError } from '../../../infra/crypto/secret-box.service';
import { SafeFetchError } from '../../../infra/net/net.errors';
import type { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import { OidcLoginStarterService } from './oidc-login-starter.service';
import { OidcProviderMetadataService } from './oidc-provider-metadata.service';
import { OIDC_HTTP } from './oidc-relying-party.service';
import type { LoginProviderRow } from './sso-login.repository';
import type { SessionLinkRow } from './sso-sign-out.repository';
import { idTokenContext } from './sso-session-link.service';

/** Where the OP returns the browser after an RP-initiated logout: one fixed path, registered at each provider. */
export const POST_LOGOUT_PATH = '/api/v1/sso/logout/callback';

/**
 * The OIDC leg of an RP-initiated logout: the provider's `end_session_endpoint` with
 * `id_token_hint`, `post_logout_redirect_uri` (our fixed path) and `state` (the return path). The
 * OIDC counterpart of the SAML module's Single Logout starter.
 */
@Injectable()
export class OidcEndSessionService {
  private readonly logger = new Logger(OidcEndSessionService.name);

  constructor(
    private readonly box: SecretBoxService,
    private readonly starter: OidcLoginStarterService,
    private readonly metadata: OidcProviderMetadataService,
    @Inject(OIDC_HTTP) private readonly http: SafeFetchService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get postLogoutRedirectUri(): string {
    return `${this.config.publicUrl}${POST_LOGOUT_PATH}`;
  }

  /** Where the browser goes to be signed out at the provider, or null when it cannot (no endpoint, no usable ID token). */
  async logoutUrl(link: SessionLinkRow, provider: LoginProviderRow, returnPath: string): Promise<string | null> {
    const client = this.starter.clientConfig(provider);
    if ('missing' in client || !link.id_token) return null;
    const { endSessionUrl } = await this.metadata.of(client.config.issuer);
    if (!endSessionUrl) return null;
    try {
      await this.http.assertSafeUrl(endSessionUrl);
    } catch (error) {
      if (!(error instanceof SafeFetchError)) throw error;
      this.logger.warn({ providerId: provider.id, reason: error.reason }, 'An end-session endpoint is not acceptable; the browser stays here');
      return null;
    }
    let idToken: string;
    try {
      idToken = this.box.decrypt(link.id_token, idTokenContext(link.session_id));
    } catch (error) {
      if (error instanceof SecretDecryptionError) return null;
      throw error;
    }
    const url = new URL(endSessionUrl);
    url.searchParams.set('id_token_hint', idToken);
    url.searchParams.set('client_id', client.config.clientId);
    url.searchParams.set('post_logout_redirect_uri', this.postLogoutRedirectUri);
    url.searchParams.set('state', returnPath);
    return url.toString();
  }
}
