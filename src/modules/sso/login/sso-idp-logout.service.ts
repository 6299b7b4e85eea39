import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { PrincipalResolverService } from '../../auth/principal-resolver.service';
import { ownerOf } from './login-provider.util';
import { OidcLoginStarterService } from './oidc-login-starter.service';
import { OidcProtocolError, OidcRelyingPartyService } from './oidc-relying-party.service';
import { SsoLoginErrors } from './sso-login.errors';
import { LoginProviderRow, SsoLoginRepository } from './sso-login.repository';
import { SsoSessionLinkService } from './sso-session-link.service';
import { IdpSessionSelector, SsoSignOutRepository } from './sso-sign-out.repository';

/** Longest logout token read (a signed JWT; real ones are well under 2 KB). */
export const MAX_LOGOUT_TOKEN_LENGTH = 16_384;

/**
 * Sign-out the identity provider starts (issue 16): the sessions an OIDC back-channel logout token
 * names, and those a SAML LogoutRequest names (validated by the SAML module). They end in one
 * statement with their refresh tokens and unredeemed exchange codes, and leave this instance's
 * principal cache at once (other instances within its TTL).
 */
@Injectable()
export class SsoIdpLogoutService {
  constructor(
    private readonly repo: SsoSignOutRepository,
    private readonly loginRepo: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
    private readonly rp: OidcRelyingPartyService,
    private readonly starter: OidcLoginStarterService,
    private readonly links: SsoSessionLinkService,
    private readonly principals: PrincipalResolverService,
    private readonly audit: AuditService,
  ) {}

  /**
   * OpenID Connect Back-Channel Logout 1.0: the logout token verified (OidcRelyingPartyService), its jti
   * recorded (a replay is refused), then every live session it names at this provider ends. A
   * token that names no live session is accepted (the spec's answer to "already signed out").
   * Refusals are 400 `invalid_logout_token`, audited with the precise reason.
   */
  async backchannel(providerId: string, logoutToken: unknown): Promise<{ success: true }> {
    const provider = await this.tx.withSystemContext('a back-channel logout names its provider', () => this.loginRepo.provider(providerId));
    if (!provider || provider.type !== 'oidc') throw SsoLoginErrors.logoutProviderNotFound();
    const tenant = ownerOf(provider);
    if (typeof logoutToken !== 'string' || logoutToken === '' || logoutToken.length > MAX_LOGOUT_TOKEN_LENGTH) return this.refuse(provider, 'logout_token_missing');
    const client = this.starter.clientConfig(provider);
    if ('missing' in client) return this.refuse(provider, 'provider_incomplete');
    let verified;
    try {
      verified = await this.rp.verifyLogoutToken(client.config, logoutToken);
    } catch (error) {
      if (error instanceof OidcProtocolError) return this.refuse(provider, error.reason);
      throw error;
    }
    const selector: IdpSessionSelector = { providerId, subject: verified.sub, idpSessionId: verified.sid };
    const outcome = await this.tx.withSystemContext('a back-channel logout ends the sessions its token names', async () => {
      if (!(await this.repo.rememberLogoutToken({ ...tenant, providerId, jti: verified.jti, expiresAt: verified.expiresAt }))) return 'replayed' as const;
      const ended = await this.links.endSessions(await this.repo.sessionsNamed(selector), 'sso_backchannel_logout');
      await this.audit.record({
        action: 'sso.logout.backchannel',
        ...tenant,
        resourceType: 'sso_provider',
        resourceId: providerId,
        actor: { type: 'system', id: null },
        details: { by: verified.sid ? 'sid' : 'sub', sessionsEnded: ended.length },
      });
      return ended;
    });
    if (outcome === 'replayed') return this.refuse(provider, 'logout_token_replayed');
    for (const session of outcome) this.principals.forgetSession(session.id);
    return { success: true };
  }

  /**
   * Ends the sessions an IdP-initiated SAML LogoutRequest names (validated by the caller), in
   * one system-context transaction. Returns how many were live.
   */
  async endNamedSessions(selector: IdpSessionSelector, tenant: { orgId: string | null; partnerId: string | null }, reason: string): Promise<number> {
    const ended = await this.tx.withSystemContext('an identity provider signs a person out', async () => {
      const sessions = await this.links.endSessions(await this.repo.sessionsNamed(selector), reason);
      await this.audit.record({
        action: 'sso.logout.idp',
        ...tenant,
        resourceType: 'sso_provider',
        resourceId: selector.providerId,
        actor: { type: 'system', id: null },
        details: { by: selector.idpSessionId ? 'session_index' : 'name_id', sessionsEnded: sessions.length },
      });
      return sessions;
    });
    for (const session of ended) this.principals.forgetSession(session.id);
    return ended.length;
  }

  private async refuse(provider: LoginProviderRow, reason: string): Promise<never> {
    await this.tx.withSystemContext('audit of a refused back-channel logout', () =>
      this.audit.record({
        action: 'sso.logout.rejected',
        ...ownerOf(provider),
        resourceType: 'sso_provider',
        resourceId: provider.id,
        actor: { type: 'system', id: null },
        details: { reason },
      }),
    );
    throw SsoLoginErrors.invalidLogoutToken();
  }
}
