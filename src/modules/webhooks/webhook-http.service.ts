import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { SafeFetchService } from '../../infra/net/safe-fetch.service';
import { parseDnsServers, SystemResolverService } from '../../infra/net/system-resolver.service';

/** Per-call budget of a DNS query. */
const DNS_TIMEOUT_MS = 5000;
/** A receiver's answer is not read past this: a longer one counts as a failed attempt (too_large). */
export const WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;
/** Connections to one receiver address at once, per instance: enough for 1,000 events a second to a receiver answering in 200 ms. */
export const WEBHOOK_SOCKETS_PER_RECEIVER = 256;

/**
 * The outbound client of webhook deliveries: the same SSRF-safe client as OIDC discovery
 * (SafeFetchService: every address the host resolves to must be public, the connection goes to the
 * checked address, no redirect is followed, one budget covers DNS, connect, TLS and the answer),
 * with DNS from DNS_SERVERS or the system's resolvers. WEBHOOKS_ALLOW_INSECURE_LOOPBACK (development
 * and tests only) lets http://127.0.0.1 and http://localhost through, as SSO's setting does for IdPs.
 */
@Injectable()
export class WebhookHttpService implements OnModuleDestroy {
  readonly http: SafeFetchService;
  private readonly resolver: SystemResolverService;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.resolver = new SystemResolverService({ servers: parseDnsServers(config.dnsServers.join(',')), timeoutMs: DNS_TIMEOUT_MS });
    this.http = new SafeFetchService({
      resolver: this.resolver,
      allowInsecureLoopback: config.webhooksAllowInsecureLoopback && !config.isProduction,
      timeoutMs: config.webhookTimeoutMs,
      maxBytes: WEBHOOK_MAX_RESPONSE_BYTES,
      userAgent: 'rmm-identity-webhooks',
      maxSocketsPerHost: WEBHOOK_SOCKETS_PER_RECEIVER,
    });
  }

  onModuleDestroy(): void {
    this.resolver.cancel();
    this.http.close();
  }
}
