import { Injectable, Logger } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { canStartOidcLogin } from '../login/login-provider.util';
import { SsoLoginRepository } from '../login/sso-login.repository';
import { domainOf } from '../../../infra/net/domain.util';
import type { SsoDiscoveryResultDto } from './email-discovery.dto';
import { EmailDiscoveryRepository } from './email-discovery.repository';

const NO_SSO: SsoDiscoveryResultDto = Object.freeze({ sso: null });

/**
 * POST /api/v1/auth/sso-discovery (spec 1.5). Keyed on the email's domain
 * alone and never reads users, so an existing and a made-up address at one domain get the
 * same answer through the same queries. Positive only for a domain exactly one organization
 * verified by DNS, whose oldest active provider is OIDC, able to sign in, and enforcing SSO;
 * anything else, including any failure, is `{ sso: null }`.
 */
@Injectable()
export class EmailDiscoveryService {
  private readonly logger = new Logger(EmailDiscoveryService.name);

  constructor(
    private readonly repo: EmailDiscoveryRepository,
    private readonly providers: SsoLoginRepository,
    private readonly tx: TenantTransactionService,
  ) {}

  async discover(email: string): Promise<SsoDiscoveryResultDto> {
    const domain = domainOf(email);
    if (!domain) return NO_SSO;
    try {
      return await this.tx.withSystemContext('discovery by email finds the organization that verified a domain', async () => {
        const claimants = await this.repo.verifiedClaimants(domain);
        if (claimants.length !== 1) return NO_SSO;
        const [orgId] = claimants;
        const provider = await this.providers.oldestActiveProvider({ orgId });
        if (!provider || !provider.enforce_sso || !canStartOidcLogin(provider)) return NO_SSO;
        return { sso: { providerName: provider.name, loginUrl: `/api/v1/sso/login/${orgId}`, enforceSSO: true as const } };
      });
    } catch (error) {
      this.logger.warn({ err: error }, 'SSO discovery by email failed; answering without SSO');
      return NO_SSO;
    }
  }
}
