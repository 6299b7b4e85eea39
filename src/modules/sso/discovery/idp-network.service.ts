import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { DomainVerifierService } from '../../../infra/net/domain-verifier.service';
import { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import { parseDnsServers, SystemResolverService } from '../../../infra/net/system-resolver.service';

/** Per-call budget of a DNS query and of one outbound HTTP exchange with an IdP. */
export const DNS_TIMEOUT_MS = 5000;
export const IDP_HTTP_TIMEOUT_MS = 5000;
/** Cap on an IdP response body (discovery documents, JWKS, token responses). */
export const IDP_MAX_RESPONSE_BYTES = 512 * 1024;

/**
 * The one place outbound SSO traffic is configured: every IdP call goes through the safe
 * client, and every DNS answer comes from DNS_SERVERS (or the system's resolvers), so tests
 * exercise the production path by pointing DNS_SERVERS at a loopback DNS server.
 */
@Injectable()
export class IdpNetworkService implements OnModuleDestroy {
  readonly resolver: SystemResolverService;
  readonly http: SafeFetchService;
  readonly domainVerifier: DomainVerifierService;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    // parseDnsServers throws on a malformed entry, so a bad DNS_SERVERS stops the boot.
    this.resolver = new SystemResolverService({ servers: parseDnsServers(config.dnsServers.join(',')), timeoutMs: DNS_TIMEOUT_MS });
    this.http = new SafeFetchService({
      resolver: this.resolver,
      allowInsecureLoopback: config.ssoAllowInsecureLoopbackIdp && !config.isProduction,
      timeoutMs: IDP_HTTP_TIMEOUT_MS,
      maxBytes: IDP_MAX_RESPONSE_BYTES,
    });
    this.domainVerifier = new DomainVerifierService({ resolver: this.resolver, timeoutMs: DNS_TIMEOUT_MS });
  }

  onModuleDestroy(): void {
    this.resolver.cancel();
  }
}
