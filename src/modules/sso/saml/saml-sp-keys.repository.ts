import { Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import type { SamlTenant } from './saml.repository';
import { SamlSpKeyEntity } from './saml-sp-key.entity';
import { SamlSpSettingsEntity, type SamlSpSettings } from './saml-sp-settings.entity';

/** A published key with its sealed private key, for the key that signs and those that decrypt. */
export type SamlSpKeyWithPrivateKey = Pick<SamlSpKeyEntity, 'id' | 'certificate' | 'createdAt' | 'retiresAt'> & { privateKey: string };

/**
 * The SP's own key pairs and its per-provider SAML settings (saml_sp_keys, saml_sp_settings), as
 * entities. Runs in the caller's transaction (DbService.repo): system context for the public routes,
 * the administrator's tenant scope for the settings routes (row-level security decides what they
 * see and change).
 */
@Injectable()
export class SamlSpKeysRepository {
  constructor(private readonly db: DbService) {}

  private keys(): Promise<Repository<SamlSpKeyEntity>> {
    return this.db.repo(SamlSpKeyEntity);
  }

  private settingsRepo(): Promise<Repository<SamlSpSettingsEntity>> {
    return this.db.repo(SamlSpSettingsEntity);
  }

  /**
   * The current key and every previous one still inside its overlap window, newest first, without
   * private keys (select: false): the SP metadata and the administrators' view. A query builder: the
   * order puts the current key first.
   */
  async publishedKeys(providerId: string): Promise<SamlSpKeyEntity[]> {
    return (await this.keys())
      .createQueryBuilder('k')
      .where('k.provider_id = :providerId AND (k.retires_at IS NULL OR k.retires_at > now())', { providerId })
      .orderBy('(k.retires_at IS NULL)', 'DESC')
      .addOrderBy('k.created_at', 'DESC')
      .getMany();
  }

  /**
   * The published keys with their sealed private keys, in the same order, for the key that signs
   * (Single Logout) and those that decrypt (the ACS). SQL: it is read during sign-in and sign-out, as
   * the first statement of a system transaction, where it travels with BEGIN in one message (an
   * entity read sends the transaction's opening on its own first).
   */
  publishedKeysWithPrivateKeys(providerId: string): Promise<SamlSpKeyWithPrivateKey[]> {
    return this.db.rows<SamlSpKeyWithPrivateKey>(
      `SELECT id, certificate, private_key AS "privateKey", created_at AS "createdAt", retires_at AS "retiresAt" FROM saml_sp_keys
        WHERE provider_id = $1 AND (retires_at IS NULL OR retires_at > now())
        ORDER BY (retires_at IS NULL) DESC, created_at DESC`,
      [providerId],
    );
  }

  /**
   * Inserts the provider's first current key; does nothing when a concurrent first use made one
   * (INSERT … ON CONFLICT DO NOTHING: the one current key per provider is a partial unique index).
   */
  async insertCurrentKey(tenant: SamlTenant, k: { id: string; certificate: string; privateKeySealed: string }): Promise<void> {
    await (await this.keys())
      .createQueryBuilder()
      .insert()
      .values({ id: k.id, orgId: tenant.orgId, partnerId: tenant.partnerId, providerId: tenant.providerId, certificate: k.certificate, privateKey: k.privateKeySealed })
      .orIgnore()
      .updateEntity(false)
      .execute();
  }

  /** Starts the current key's overlap window (from the database's clock); returns how many keys it retired (0 or 1). */
  async retireCurrentKey(providerId: string, overlapSeconds: number): Promise<number> {
    const { affected } = await (await this.keys())
      .createQueryBuilder()
      .update()
      .set({ retiresAt: () => 'now() + make_interval(secs => :overlapSeconds)' })
      .where('provider_id = :providerId AND retires_at IS NULL', { providerId, overlapSeconds })
      .execute();
    return affected ?? 0;
  }

  /** The settings as their administrators see and change them. */
  async settings(providerId: string): Promise<SamlSpSettingsEntity | null> {
    return (await this.settingsRepo()).findOneBy({ providerId });
  }

  /**
   * The settings the ACS (encrypted assertions required?) and Single Logout (the IdP's URL) read.
   * SQL for the reason given at publishedKeysWithPrivateKeys: the ACS reads it alone in its system
   * transaction, where an entity read would cost a message more on every sign-in.
   */
  signInSettings(providerId: string): Promise<SamlSpSettings | null> {
    return this.db.one<SamlSpSettings>(
      `SELECT idp_slo_url AS "idpSloUrl", require_encrypted_assertions AS "requireEncryptedAssertions" FROM saml_sp_settings WHERE provider_id = $1`,
      [providerId],
    );
  }

  /** Creates or replaces the provider's settings (INSERT … ON CONFLICT DO UPDATE, updated_at set to its default). */
  async saveSettings(tenant: SamlTenant, s: SamlSpSettings, userId: string | null): Promise<void> {
    const repo = await this.settingsRepo();
    await repo.upsert(
      repo.create({
        providerId: tenant.providerId,
        orgId: tenant.orgId,
        partnerId: tenant.partnerId,
        idpSloUrl: s.idpSloUrl,
        requireEncryptedAssertions: s.requireEncryptedAssertions,
        updatedBy: userId,
      }),
      ['providerId'],
    );
  }

  /** The provider as its administrators see it (row-level security applies), SAML only. SQL: sso_providers is the providers module's table. */
  samlProvider(providerId: string): Promise<{ id: string; org_id: string | null; partner_id: string | null } | null> {
    return this.db.one(`SELECT id, org_id, partner_id FROM sso_providers WHERE id = $1 AND type = 'saml'`, [providerId]);
  }
}
