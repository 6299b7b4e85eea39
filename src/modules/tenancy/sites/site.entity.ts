import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';

/**
 * sites (migration 1763700000000): a location of an organization; names are unique within it.
 * Written only by the sites repositories (SiteRepository, and SiteBatchRepository for the
 * importer). Site-restricted callers see only their sites (restrictive policies, migration
 * 1763700950000).
 */
@Entity({ name: 'sites' })
export class SiteEntity extends IdTimestampedEntity {
  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** An IANA time zone name (checked by the DTO). */
  @Column({ type: 'varchar', length: 64 })
  timezone: string;
}
