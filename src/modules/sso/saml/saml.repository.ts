import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { SsoProviderType } from '../providers/sso-provider.types';
import type { SamlProviderColumns } from './saml-provider.util';

/** The owner and id of the provider a row belongs to. */
export interface SamlTenant {
  orgId: string | null;
  partnerId: string | null;
  providerId: string;
}

/**
 * Tables of the SAML service provider. Its routes are public, so callers run these in a
 * named system context.
 */
@Injectable()
export class SamlRepository {
  constructor(private readonly db: DbService) {}

  providerType(id: string): Promise<{ id: string; type: SsoProviderType } | null> {
    return this.db.one(`SELECT id, type FROM sso_providers WHERE id = $1`, [id]);
  }

  samlColumns(providerId: string): Promise<SamlProviderColumns | null> {
    return this.db.one<SamlProviderColumns>(`SELECT entity_id, sso_url, certificate, name_id_format, force_authn FROM sso_providers WHERE id = $1`, [providerId]);
  }

  async saveRequest(tenant: SamlTenant, requestId: string, issuedAt: Date, ttlSeconds: number): Promise<void> {
    await this.db.exec(
      `INSERT INTO saml_request_cache (org_id, partner_id, provider_id, request_id, issued_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $5::timestamptz + make_interval(secs => $6))`,
      [tenant.orgId, tenant.partnerId, tenant.providerId, requestId, issuedAt, ttlSeconds],
    );
  }

  /** When the provider sent this request, if it is still awaiting its answer. */
  async pendingRequest(providerId: string, requestId: string): Promise<Date | null> {
    const row = await this.db.one<{ issued_at: Date }>(
      `SELECT issued_at FROM saml_request_cache WHERE provider_id = $1 AND request_id = $2 AND expires_at > now()`,
      [providerId, requestId],
    );
    return row?.issued_at ?? null;
  }

  async removeRequest(providerId: string, requestId: string): Promise<Date | null> {
    const row = await this.db.one<{ issued_at: Date }>(
      `DELETE FROM saml_request_cache WHERE provider_id = $1 AND request_id = $2 RETURNING issued_at`,
      [providerId, requestId],
    );
    return row?.issued_at ?? null;
  }

  /** Removes a bounded batch of requests that were never answered. */
  async sweepExpiredRequests(): Promise<void> {
    await this.db.exec(`DELETE FROM saml_request_cache WHERE id IN (SELECT id FROM saml_request_cache WHERE expires_at < now() LIMIT 100)`);
  }

  /**
   * Records that an assertion has been used. False when it already was: the single
   * INSERT … ON CONFLICT makes two concurrent uses resolve to exactly one winner.
   */
  async consumeAssertion(tenant: SamlTenant, assertionId: string, expiresAt: Date): Promise<boolean> {
    const row = await this.db.one(
      `INSERT INTO saml_consumed_assertions (org_id, partner_id, provider_id, assertion_id, expires_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (provider_id, assertion_id) DO NOTHING RETURNING id`,
      [tenant.orgId, tenant.partnerId, tenant.providerId, assertionId, expiresAt],
    );
    return row !== null;
  }

  /** Forgets a bounded batch of assertions that can no longer be presented anyway. */
  async sweepConsumedAssertions(): Promise<void> {
    await this.db.exec(`DELETE FROM saml_consumed_assertions WHERE id IN (SELECT id FROM saml_consumed_assertions WHERE expires_at < now() LIMIT 100)`);
  }
}
