import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { LoginBrandingSource } from './login-branding.source';
import type { LoginContextDto } from './sso-login.dto';
import { SsoLoginRepository } from './sso-login.repository';

const EMPTY: LoginContextDto = Object.freeze({ branding: null, partnerSso: null });

/**
 * GET /api/v1/auth/login-context: what the login page shows before anyone is identified. The
 * partner sign-in button and the login branding appear only on a self-hosted deployment with
 * exactly one partner (spec 1.6.2, 1.9.2); hosted and multi-partner deployments get nothing.
 */
@Injectable()
export class LoginContextService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
    private readonly branding: LoginBrandingSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async context(): Promise<LoginContextDto> {
    if (this.config.isHosted) return EMPTY;
    const found = await this.tx.withSystemContext('the public login page looks for the single partner of a self-hosted deployment', async () => {
      const partnerId = await this.repo.onlyPartner();
      if (!partnerId) return null;
      return { partnerId, provider: await this.repo.oldestActiveProvider({ partnerId }) };
    });
    if (!found) return EMPTY;
    const { partnerId, provider } = found;
    // The button starts GET /sso/login/partner/:partnerId, which is OIDC only.
    const partnerSso =
      provider && provider.type === 'oidc'
        ? { providerName: provider.name, loginUrl: `/api/v1/sso/login/partner/${partnerId}`, enforceSSO: provider.enforce_sso }
        : null;
    return { branding: await this.branding.forPartner(partnerId), partnerSso };
  }
}
