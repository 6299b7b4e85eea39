import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * saml_sp_settings (migration 1763700942000): the SAML settings of one SSO provider (keyed by it),
 * owned by the provider's organization or partner (exactly one is set): the IdP's Single Logout URL
 * and whether assertions must arrive encrypted. No created_at. Written only by SamlSpKeysRepository.
 */
@Entity({ name: 'saml_sp_settings' })
export class SamlSpSettingsEntity {
  @PrimaryColumn({ name: 'provider_id', type: 'uuid' })
  providerId: string;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  /** HTTP-Redirect binding; checked by the settings service before it is written. */
  @Column({ name: 'idp_slo_url', type: 'varchar', length: 500, nullable: true })
  idpSloUrl: string | null;

  @Column({ name: 'require_encrypted_assertions', type: 'boolean', default: false })
  requireEncryptedAssertions: boolean;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy: string | null;
}

/** What the administrators set. */
export type SamlSpSettings = Pick<SamlSpSettingsEntity, 'idpSloUrl' | 'requireEncryptedAssertions'>;
