import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { loginPathFor } from '../providers/sso-provider.types';
import type { StartedSignIn } from '../sign-in/sign-in-response.util';
import { OidcLoginStarterService } from './oidc-login-starter.service';
import { safeRedirectPath } from './redirect-path.util';
import { SsoLoginErrors } from './sso-login.errors';
import { ProviderOwner, SsoLoginRepository } from './sso-login.repository';

/** GET /sso/login/:orgId and /sso/login/partner/:partnerId (spec 1.1.2–4, 1.6.3). */
@Injectable()
export class SsoLoginService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
    private readonly starter: OidcLoginStarterService,
  ) {}

  get secureCookies(): boolean {
    return this.starter.secureCookies;
  }

  async start(owner: ProviderOwner, redirect: unknown): Promise<StartedSignIn> {
    // One statement, no transaction of its own: one message.
    const provider = await this.tx.withSystemLookup('a public login start finds the login provider of a tenant', () => this.repo.oldestActiveProvider(owner));
    if (!provider) throw SsoLoginErrors.noActiveProvider(owner.orgId ? 'organization' : 'partner');
    if (provider.type === 'saml') throw SsoLoginErrors.samlProvider(loginPathFor('saml', owner));
    return this.starter.begin(provider, { purpose: 'login', redirectPath: safeRedirectPath(redirect) });
  }
}
