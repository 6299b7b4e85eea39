import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumns } from '../../../infra/database/entity-base';

export type OrganizationStatus = 'active' | 'suspended';

/**
 * organizations (migration 1763700000000): a customer of a partner. Written only by the
 * organizations repositories (OrganizationRepository, and OrganizationBatchRepository for the
 * importer). The id is chosen by the service, which must add it to the transaction's scope first.
 */
@Entity({ name: 'organizations' })
export class OrganizationEntity extends TimestampColumns {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'partner_id', type: 'uuid' })
  partnerId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  status: OrganizationStatus;
}
