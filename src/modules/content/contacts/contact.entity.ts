import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';
import type { ContactPhone } from './contact-fields.util';

/**
 * contacts (migration 1763700400000): a person of an organization, at organization level or
 * pinned to one of its sites (a composite foreign key; deleting the site unpins it). External ids
 * are unique within the organization. Written only by the contacts repositories (ContactRepository,
 * and ContactBatchRepository for the importer).
 */
@Entity({ name: 'contacts' })
export class ContactEntity extends IdTimestampedEntity {
  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @Column({ name: 'site_id', type: 'uuid', nullable: true })
  siteId: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  email: string | null;

  @Column({ type: 'jsonb' })
  phones: ContactPhone[];

  @Column({ type: 'varchar', length: 255, nullable: true })
  title: string | null;

  @Column({ type: 'text', nullable: true })
  notes: string | null;

  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId: string | null;
}
