import { Column, Entity } from 'typeorm';
import { IdCreatedEntity } from '../../../infra/database/entity-base';

/**
 * sso_verified_domains (migration 1763700200000): an organization's claim to an email domain and
 * its DNS proof. Written only by SsoDomainRepository. A CHECK keeps `verified` with its times.
 */
@Entity({ name: 'sso_verified_domains' })
export class SsoDomainEntity extends IdCreatedEntity {
  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  /** Normalised by the service: lower-case ASCII (IDN in punycode), no trailing dot. */
  @Column({ type: 'varchar', length: 253 })
  domain: string;

  /** Published in DNS by the organization, so not a secret. */
  @Column({ type: 'varchar', length: 64 })
  token: string;

  @Column({ type: 'boolean' })
  verified: boolean;

  @Column({ name: 'verified_at', type: 'timestamptz', nullable: true })
  verifiedAt: Date | null;

  @Column({ name: 'last_checked_at', type: 'timestamptz', nullable: true })
  lastCheckedAt: Date | null;

  @Column({ name: 'last_seen_at', type: 'timestamptz', nullable: true })
  lastSeenAt: Date | null;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;
}
