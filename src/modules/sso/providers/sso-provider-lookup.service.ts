import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { SsoProviderRepository } from './sso-provider.repository';
import { clientSecretContext, SsoOwner, SsoProviderRecord, SsoProviderStatus } from './sso-provider.types';

/**
 * What the sign-in flows (OIDC, SAML, discovery by email, /sso/check) read about providers.
 * These callers are public routes with no tenant yet, so every read is a named system-context
 * read; inside a transaction it joins it, outside it opens a short one.
 */
@Injectable()
export class SsoProviderLookupService {
  constructor(
    private readonly repo: SsoProviderRepository,
    private readonly tx: TenantTransactionService,
    private readonly box: SecretBoxService,
  ) {}

  /** Spec 1.1.3 / 1.6.3: the provider a login entry route uses: oldest active by creation time, ties by id. */
  oldestActive(owner: SsoOwner): Promise<SsoProviderRecord | null> {
    return this.tx.withSystemContext('sign-in finds the login provider of an organization or partner', () => this.repo.oldestActive(owner));
  }

  oldestActiveForOrg(orgId: string): Promise<SsoProviderRecord | null> {
    return this.oldestActive({ orgId, partnerId: null });
  }

  oldestActiveForPartner(partnerId: string): Promise<SsoProviderRecord | null> {
    return this.oldestActive({ orgId: null, partnerId });
  }

  findById(id: string): Promise<SsoProviderRecord | null> {
    return this.tx.withSystemContext('sign-in reads the provider a login session belongs to', () => this.repo.find(id));
  }

  /**
   * The provider's current generation and status, for the callback's check that the
   * configuration a login started under is still the one in force (spec 1.2.3).
   */
  currentGeneration(id: string): Promise<{ generation: number; status: SsoProviderStatus } | null> {
    return this.tx.withSystemContext('sign-in re-checks the provider generation', () => this.repo.generationOf(id));
  }

  /** The plaintext client secret, or null when none is configured. Never log or return it. */
  clientSecret(record: Pick<SsoProviderRecord, 'id' | 'clientSecretSealed'>): string | null {
    return record.clientSecretSealed === null ? null : this.box.decrypt(record.clientSecretSealed, clientSecretContext(record.id));
  }
}
