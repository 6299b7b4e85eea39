import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { randomToken, SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { ownerOf } from '../login/login-provider.util';
import { safeRedirectPath } from '../login/redirect-path.util';
import { SsoLoginErrors } from '../login/sso-login.errors';
import type { ProviderOwner } from '../login/sso-login.repository';
import { LoginSessionService } from '../sign-in/login-session.service';
import type { StartedSignIn } from '../sign-in/sign-in-response.util';
import { LOGIN_SESSION_TTL_SECONDS, stateCookieValue } from '../login/state-cookie.util';
import { isAcceptableBrowserUrl } from '../providers/provider-config.util';
import { loginPathFor } from '../providers/sso-provider.types';
import { samlStateCookieOptions } from './saml-cookie.util';
import { samlSettings } from './saml-provider.util';
import { SamlRequestCacheService } from './saml-request-cache.service';
import { SamlSpService } from './saml-sp.service';
import { SamlSpKeysService } from './saml-sp-keys.service';
import { SamlErrors } from './saml.errors';
import { SamlRepository } from './saml.repository';

/**
 * GET /sso/saml/login/:orgId and /sso/saml/login/partner/:partnerId: the SP-initiated start
 * of a SAML sign-in, shaped like the OIDC one. The RelayState plays the OIDC state: it names
 * a login session (sso_sessions, 10 minutes, bound to the provider's generation) whose nonce
 * column holds the AuthnRequest id, and the browser gets the same signed state cookie.
 */
@Injectable()
export class SamlLoginService {
  constructor(
    private readonly loginSessions: LoginSessionService,
    private readonly repo: SamlRepository,
    private readonly tx: TenantTransactionService,
    private readonly box: SecretBoxService,
    private readonly sp: SamlSpService,
    private readonly cache: SamlRequestCacheService,
    private readonly keys: SamlSpKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get secureCookies(): boolean {
    return this.config.isProduction;
  }

  async start(owner: ProviderOwner, redirect: unknown): Promise<StartedSignIn> {
    const found = await this.tx.withSystemLookup('a public SAML login start finds the login provider of a tenant', () =>
      this.loginSessions.oldestActiveProviderWithSaml(owner),
    );
    if (!found) throw SsoLoginErrors.noActiveProvider(owner.orgId ? 'organization' : 'partner');
    const { provider, saml: columns } = found;
    if (provider.type !== 'saml' || !columns) throw SamlErrors.oidcProvider(loginPathFor('oidc', owner));
    const configured = samlSettings(columns);
    if ('missing' in configured) throw SsoLoginErrors.incompleteProvider(configured.missing);
    const { settings } = configured;
    // Checked when saved; checked again because the rules of this deployment may be stricter now.
    if (!isAcceptableBrowserUrl(settings.ssoUrl, this.config.ssoAllowInsecureLoopbackIdp && !this.config.isProduction)) {
      throw SsoLoginErrors.unsafeEndpoint('sso_url_not_https');
    }

    const state = randomToken(32);
    const requestId = this.sp.newRequestId();
    const tenant = { ...ownerOf(provider), providerId: provider.id };
    const authUrl = await this.tx.withSystemContext('a public SAML login start records its login session and AuthnRequest id', async () => {
      await this.repo.sweepExpiredRequests();
      await this.loginSessions.record({
        orgId: tenant.orgId,
        partnerId: tenant.partnerId,
        providerId: provider.id,
        state,
        nonce: requestId,
        // SAML has no PKCE; the column is OIDC's.
        codeVerifier: '',
        redirectUrl: safeRedirectPath(redirect),
        generation: provider.generation,
        purpose: 'login',
        linkUserId: null,
        linkSessionId: null,
        issRequired: false,
        ttlSeconds: LOGIN_SESSION_TTL_SECONDS,
      });
      return this.sp.authorizeUrl(provider.id, settings, this.cache.forProvider(tenant), requestId, state);
    });
    return { authUrl, stateCookie: stateCookieValue(this.box, state), cookie: samlStateCookieOptions(this.secureCookies) };
  }

  /** GET /sso/saml/metadata/:providerId, for any status: an IdP is set up before the provider goes live. */
  async metadata(providerId: string): Promise<string> {
    const provider = await this.tx.withSystemContext('an IdP reads the public SP metadata of a provider', () => this.loginSessions.provider(providerId));
    if (!provider || provider.type !== 'saml') throw SamlErrors.providerNotFound();
    const keys = await this.keys.certificates({ ...ownerOf(provider), providerId: provider.id });
    return this.sp.metadataXml(provider.id, keys);
  }
}
