import { Injectable } from '@nestjs/common';
import type { CacheItem, CacheProvider } from '@node-saml/node-saml';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { LOGIN_SESSION_TTL_SECONDS } from '../login/state-cookie.util';
import { SamlRepository, SamlTenant } from './saml.repository';

/**
 * node-saml's InResponseTo cache, in PostgreSQL (saml_request_cache) so that any instance
 * can receive the answer to a request another one sent. Each cache is bound to one
 * provider: a response can only name a request that same provider sent.
 *
 * Every call joins the caller's transaction when there is one (the login start writes the
 * request together with its login session) and opens a short one otherwise.
 */
@Injectable()
export class SamlRequestCacheService {
  constructor(
    private readonly repo: SamlRepository,
    private readonly tx: TenantTransactionService,
  ) {}

  forProvider(tenant: SamlTenant): CacheProvider {
    const run = <T>(fn: () => Promise<T>) => this.tx.withSystemContext('the SAML request cache of a public sign-in', fn);
    return {
      // node-saml stores the request's IssueInstant and reads it back to judge its age.
      saveAsync: (key: string, value: string): Promise<CacheItem | null> =>
        run(async () => {
          const issuedAt = new Date(value);
          await this.repo.saveRequest(tenant, key, Number.isNaN(issuedAt.getTime()) ? new Date() : issuedAt, LOGIN_SESSION_TTL_SECONDS);
          return { value, createdAt: Date.now() };
        }),
      getAsync: (key: string): Promise<string | null> =>
        run(async () => (await this.repo.pendingRequest(tenant.providerId, key))?.toISOString() ?? null),
      removeAsync: (key: string | null): Promise<string | null> =>
        key === null ? Promise.resolve(null) : run(async () => (await this.repo.removeRequest(tenant.providerId, key))?.toISOString() ?? null),
    };
  }
}
