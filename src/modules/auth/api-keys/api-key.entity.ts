import { Column, Entity } from 'typeorm';
import { IdCreatedEntity } from '../../../infra/database/entity-base';

/**
 * api_keys (migration 1763700000000): a key bound to one organization or, partner-wide, to a
 * partner (exactly one of orgId and partnerId; a CHECK says so). Written only by ApiKeyRepository.
 * Principal resolution reads keys and stamps last_used_at with its own SQL in the auth module: it
 * runs on every request made with a key.
 */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity extends IdCreatedEntity {
  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** The first 8 characters after `sk_`. */
  @Column({ name: 'key_prefix', type: 'varchar', length: 16 })
  keyPrefix: string;

  /** SHA-256 of the secret, hex. Written once; never selected, so no read of a key carries it. */
  @Column({ name: 'key_hash', type: 'varchar', length: 64, select: false })
  keyHash: string;

  @Column({ type: 'text', array: true })
  permissions: string[];

  @Column({ name: 'mfa_satisfied', type: 'boolean' })
  mfaSatisfied: boolean;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
