import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { SamlTenant } from './saml.repository';

export interface SpKeyRow {
  id: string;
  certificate: string;
  private_key: string;
  created_at: Date;
  retires_at: Date | null;
}

export interface SpSettingsRow {
  idp_slo_url: string | null;
  require_encrypted_assertions: boolean;
}

/**
 * The SP's own key pairs and its per-provider SAML settings (saml_sp_keys, saml_sp_settings).
 * Runs in the caller's transaction: system context for the public routes, the administrator's
 * tenant scope for the settings routes (row-level security decides what they see and change).
 */
@Injectable()
export class SamlSpKeysRepository {
  constructor(private readonly db: DbService) {}

  /** The current key and every previous one still inside its overlap window, newest first. */
  publishedKeys(providerId: string): Promise<SpKeyRow[]> {
    return this.db.rows<SpKeyRow>(
      `SELECT id, certificate, private_key, created_at, retires_at FROM saml_sp_keys
        WHERE provider_id = $1 AND (retires_at IS NULL OR retires_at > now())
        ORDER BY (retires_at IS NULL) DESC, created_at DESC`,
      [providerId],
    );
  }

  /** Inserts the provider's first current key; does nothing when a concurrent first use made one. */
  async insertCurrentKey(tenant: SamlTenant, k: { id: string; certificate: string; privateKeySealed: string }): Promise<void> {
    await this.db.exec(
      `INSERT INTO saml_sp_keys (id, org_id, partner_id, provider_id, certificate, private_key) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (provider_id) WHERE retires_at IS NULL DO NOTHING`,
      [k.id, tenant.orgId, tenant.partnerId, tenant.providerId, k.certificate, k.privateKeySealed],
    );
  }

  /** Starts the current key's overlap window; returns how many keys it retired (0 or 1). */
  retireCurrentKey(providerId: string, overlapSeconds: number): Promise<number> {
    return this.db.exec(`UPDATE saml_sp_keys SET retires_at = now() + make_interval(secs => $2) WHERE provider_id = $1 AND retires_at IS NULL`, [providerId, overlapSeconds]);
  }

  settings(providerId: string): Promise<SpSettingsRow | null> {
    return this.db.one<SpSettingsRow>(`SELECT idp_slo_url, require_encrypted_assertions FROM saml_sp_settings WHERE provider_id = $1`, [providerId]);
  }

  async saveSettings(tenant: SamlTenant, s: SpSettingsRow, userId: string | null): Promise<void> {
    await this.db.exec(
      `INSERT INTO saml_sp_settings (provider_id, org_id, partner_id, idp_slo_url, require_encrypted_assertions, updated_by) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (provider_id) DO UPDATE SET idp_slo_url = EXCLUDED.idp_slo_url, require_encrypted_assertions = EXCLUDED.require_encrypted_assertions,
         updated_at = now(), updated_by = EXCLUDED.updated_by`,
      [tenant.providerId, tenant.orgId, tenant.partnerId, s.idp_slo_url, s.require_encrypted_assertions, userId],
    );
  }

  /** The provider as its administrators see it (row-level security applies), SAML only. */
  samlProvider(providerId: string): Promise<{ id: string; org_id: string | null; partner_id: string | null } | null> {
    return this.db.one(`SELECT id, org_id, partner_id FROM sso_providers WHERE id = $1 AND type = 'saml'`, [providerId]);
  }
}
