import { Injectable, Logger } from '@nestjs/common';
import { Principal, scopeOf } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { callerVisible, DiscoveryError } from '../../../infra/net/net.errors';
import { AuditService } from '../../audit/audit.service';
import { ProviderDiscoveryService } from '../discovery/provider-discovery.service';
import { SsoErrors } from '../sso.errors';
import type { SsoProviderTestDto } from './sso-provider.dto';
import { SsoProviderRepository } from './sso-provider.repository';
import { SsoProviderRecord } from './sso-provider.types';

/**
 * The connection test of an SSO provider (spec 4.1), audited. It calls the IdP, so its route runs
 * without a request transaction: the read before and the audit row after the outbound call are
 * short transactions of their own, under the caller's scope.
 */
@Injectable()
export class SsoConnectionTestService {
  private readonly logger = new Logger(SsoConnectionTestService.name);

  constructor(
    private readonly repo: SsoProviderRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly discovery: ProviderDiscoveryService,
  ) {}

  /** Checks the IdP answers: OIDC discovery, or for SAML whether the SSO URL's server answers. */
  async test(principal: Principal, id: string): Promise<SsoProviderTestDto> {
    const scope = scopeOf(principal);
    const current = await this.tx.run(scope, () => this.repo.find(id));
    if (!current) throw SsoErrors.providerNotFound();

    const precise = await this.runTest(current);
    if (precise.error) this.logger.warn({ providerId: id, reason: precise.error.reason }, `SSO provider test failed: ${precise.error.message}`);
    const result: SsoProviderTestDto = precise.error ? { ...precise, error: callerVisible(precise.error.reason, precise.error.message) } : precise;
    await this.tx.run(scope, () =>
      this.audit.record({
        action: 'sso.provider.test',
        orgId: current.orgId,
        partnerId: current.partnerId,
        resourceType: 'sso_provider',
        resourceId: id,
        details: { type: current.type, reachable: result.reachable, ...(result.error ? { reason: result.error.reason } : {}) },
      }),
    );
    return result;
  }

  private async runTest(current: SsoProviderRecord): Promise<SsoProviderTestDto> {
    if (current.type === 'saml') {
      if (!current.ssoUrl) return { success: true, reachable: false, error: { reason: 'not_configured', message: 'The provider has no SSO URL' } };
      const probe = await this.discovery.probe(current.ssoUrl);
      return probe.reachable
        ? { success: true, reachable: true }
        : { success: true, reachable: false, error: { reason: probe.error.reason, message: probe.error.message } };
    }
    if (!current.issuer) return { success: true, reachable: false, error: { reason: 'not_configured', message: 'The provider has no issuer' } };
    try {
      const found = await this.discovery.discover(current.issuer);
      const endpointsMatch =
        found.issuer === current.issuer &&
        found.authorizationUrl === current.authorizationUrl &&
        found.tokenUrl === current.tokenUrl &&
        found.userInfoUrl === current.userInfoUrl &&
        found.jwksUrl === current.jwksUrl;
      return { success: true, reachable: true, discovered: found, endpointsMatch };
    } catch (error) {
      if (!(error instanceof DiscoveryError)) throw error;
      return { success: true, reachable: false, error: { reason: error.reason, message: error.message } };
    }
  }
}
