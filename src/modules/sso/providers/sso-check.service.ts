import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { SsoCheckDto } from './sso-provider.dto';
import { SsoProviderRepository } from './sso-provider.repository';
import { loginPathFor } from './sso-provider.types';

/** GET /sso/check/:orgId: whether an organization's login page should offer SSO. */
@Injectable()
export class SsoCheckService {
  constructor(
    private readonly repo: SsoProviderRepository,
    private readonly tx: TenantTransactionService,
  ) {}

  /**
   * An unknown or suspended organization answers like one without SSO, so the public
   * route does not tell which organization ids exist.
   */
  async check(orgId: string): Promise<SsoCheckDto> {
    return this.tx.withSystemContext('public login page asks whether an organization uses SSO', async () => {
      if (!(await this.repo.organizationActive(orgId))) return { ssoEnabled: false };
      const provider = await this.repo.oldestActive({ orgId, partnerId: null });
      if (!provider) return { ssoEnabled: false };
      return {
        ssoEnabled: true,
        provider: { id: provider.id, name: provider.name, type: provider.type },
        enforceSSO: provider.enforceSSO,
        loginUrl: loginPathFor(provider.type, { orgId }),
      };
    });
  }
}
