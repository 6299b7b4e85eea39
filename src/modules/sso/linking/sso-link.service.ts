import { Injectable } from '@nestjs/common';
import { Principal, scopeOf } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { OidcLoginStarterService } from '../login/oidc-login-starter.service';
import { SsoLoginErrors } from '../login/sso-login.errors';
import { ProviderOwner, SsoLoginRepository } from '../login/sso-login.repository';
import type { StartedSignIn } from '../sign-in/sign-in-response.util';
import type { LinkOptionsDto } from './sso-link.dto';

/** The profile page the link round trip returns to (docs/sso-login.md, "Redirect codes"). */
export const LINK_RETURN_PATH = '/settings/profile';

/**
 * Self-service identity linking (spec 1.8): which providers the signed-in user can link, and
 * the start of the round trip, bound to the user and the session that asked for it.
 */
@Injectable()
export class SsoLinkService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
    private readonly starter: OidcLoginStarterService,
  ) {}

  /** Runs in the request's transaction, under the caller's row-level security. */
  async options(principal: Principal): Promise<LinkOptionsDto> {
    const owner = this.ownerOf(principal);
    const userId = principal.userId;
    if (!owner || !userId) return { success: true, providers: [] };
    const [providers, identities] = await Promise.all([this.repo.linkableProviders(owner), this.repo.identitiesOfUser(userId)]);
    return {
      success: true,
      providers: providers.map((p) => {
        const identity = identities.find((i) => i.provider_id === p.id);
        return { id: p.id, name: p.name, linked: !!identity, linkedEmail: identity?.email ?? null, lastLoginAt: identity?.last_login_at ?? null };
      }),
    };
  }

  async start(principal: Principal, providerId: string): Promise<StartedSignIn> {
    if (principal.kind !== 'user' || !principal.userId || !principal.sessionId) throw SsoLoginErrors.linkNeedsUserSession();
    const owner = this.ownerOf(principal);
    const provider = await this.tx.run(scopeOf(principal), () => this.repo.provider(providerId));
    const ownProvider = !!owner && !!provider && (owner.orgId ? provider.org_id === owner.orgId : provider.partner_id === owner.partnerId);
    if (!ownProvider || !provider || provider.status !== 'active' || provider.type !== 'oidc') throw SsoLoginErrors.linkProviderNotFound();
    return this.starter.begin(provider, { purpose: 'link', redirectPath: LINK_RETURN_PATH, linkUserId: principal.userId, linkSessionId: principal.sessionId });
  }

  /** The tenant whose providers the session can link with: its organization, or its partner. */
  private ownerOf(principal: Principal): ProviderOwner | null {
    if (principal.scope === 'organization' && principal.orgId) return { orgId: principal.orgId };
    if (principal.scope === 'partner' && principal.partnerId) return { partnerId: principal.partnerId };
    return null;
  }
}
