import { Column, Entity } from 'typeorm';
import { IdCreatedEntity } from '../../../infra/database/entity-base';

/**
 * saml_sp_keys (migration 1763700942000): one RSA key pair of the SAML service provider, per SSO
 * provider, owned by the provider's organization or partner (exactly one is set). The current key
 * has no retires_at (a partial unique index keeps one per provider); a rotation sets the previous
 * one's retires_at to the end of its overlap window. Written only by SamlSpKeysRepository.
 */
@Entity({ name: 'saml_sp_keys' })
export class SamlSpKeyEntity extends IdCreatedEntity {
  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ name: 'provider_id', type: 'uuid' })
  providerId: string;

  /** PEM; public (published in the SP metadata). */
  @Column({ type: 'text' })
  certificate: string;

  /**
   * The PEM private key sealed with the encryption key, bound to the row's id (SecretBoxService).
   * Never selected unless a read asks for it (the keys that sign and decrypt); never answered or logged.
   */
  @Column({ name: 'private_key', type: 'text', select: false })
  privateKey?: string;

  @Column({ name: 'retires_at', type: 'timestamptz', nullable: true })
  retiresAt: Date | null;
}
