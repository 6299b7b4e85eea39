import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';

export type PartnerStatus = 'active' | 'suspended';

/**
 * partners (migration 1763700000000): an MSP, the top of the tenancy hierarchy. Created only by
 * PartnerRepository (the bootstrap-admin command). Principal resolution reads the status with its
 * own SQL (a measured hot path).
 */
@Entity({ name: 'partners' })
export class PartnerEntity extends IdTimestampedEntity {
  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  status: PartnerStatus;
}
