import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { PrincipalResolverService } from '../../auth/principal-resolver.service';
import { OidcEndSessionService } from './oidc-end-session.service';
import { safeRedirectPath } from './redirect-path.util';
import { SsoLoginErrors } from './sso-login.errors';
import { SsoLoginRepository } from './sso-login.repository';
import { SessionLinkRow, SsoSignOutRepository } from './sso-sign-out.repository';
import { SsoSessionLinkService } from './sso-session-link.service';

/**
 * Builds the IdP sign-out URL of a SAML session (SP-initiated Single Logout); provided by the
 * SAML module, which depends on this one.
 */
export interface SamlLogoutStarter {
  logoutUrl(link: SessionLinkRow, returnPath: string): Promise<string | null>;
}

export interface LogoutStarted {
  success: true;
  /** Where the browser goes next: the identity provider's sign-out, or a path on this origin. */
  logoutUrl: string;
}

/**
 * RP-initiated sign-out (issue 16): ends the caller's session and sends the browser to the
 * identity provider's sign-out (OIDC with `id_token_hint`, SAML Single Logout), then back to a
 * path on this origin. The session ends in one statement with its refresh tokens and unredeemed
 * exchange code, and leaves this instance's principal cache at once (other instances within its TTL).
 */
@Injectable()
export class SsoLogoutService {
  private samlStarter: SamlLogoutStarter | null = null;

  constructor(
    private readonly repo: SsoSignOutRepository,
    private readonly loginRepo: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
    private readonly links: SsoSessionLinkService,
    private readonly oidc: OidcEndSessionService,
    private readonly principals: PrincipalResolverService,
    private readonly audit: AuditService,
  ) {}

  /** The SAML module registers its Single Logout here (it imports this module, not the reverse). */
  useSamlLogout(starter: SamlLogoutStarter): void {
    this.samlStarter = starter;
  }

  /**
   * Ends the caller's session and answers where the browser goes next: for a session an OIDC
   * provider with an `end_session_endpoint` opened, that endpoint with `id_token_hint`,
   * `post_logout_redirect_uri` (our fixed path) and `state` (the return path); for a SAML session
   * of a provider with a Single Logout service, a signed LogoutRequest; otherwise the return path.
   */
  async logout(principal: Principal, redirect: unknown): Promise<LogoutStarted> {
    if (!principal.sessionId) throw SsoLoginErrors.logoutNeedsUserSession();
    const sessionId = principal.sessionId;
    const returnPath = safeRedirectPath(redirect ?? '/login');
    const link = await this.tx.withSystemContext('a user ends their own session', async () => {
      const found = await this.repo.linkOfSession(sessionId);
      const provider = found ? await this.loginRepo.provider(found.provider_id) : null;
      // By id: a session no identity provider opened (a password sign-in) ends here too.
      await this.links.endSessions([sessionId], 'logout');
      await this.audit.record({
        action: 'sso.logout',
        orgId: principal.scope === 'partner' ? null : principal.orgId,
        partnerId: principal.scope === 'partner' ? principal.partnerId : null,
        resourceType: 'session',
        resourceId: sessionId,
        details: { initiatedBy: 'user', providerId: found?.provider_id ?? null },
      });
      return found && provider ? { found, provider } : null;
    });
    this.principals.forgetSession(sessionId);
    if (!link) return { success: true, logoutUrl: returnPath };
    const url = link.found.protocol === 'oidc' ? await this.oidc.logoutUrl(link.found, link.provider, returnPath) : await this.samlStarter?.logoutUrl(link.found, returnPath);
    return { success: true, logoutUrl: url ?? returnPath };
  }

  /** Where the OP returned the browser: the `state` it carried, read again as a same-origin path. */
  returnLocation(state: unknown): string {
    return safeRedirectPath(state ?? '/login');
  }
}
