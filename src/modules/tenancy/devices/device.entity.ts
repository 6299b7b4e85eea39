import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';
import type { DeviceStatus } from './device.dto';

/**
 * devices (migration 1763700000000): a managed machine in a site of an organization. Written only
 * by the devices repositories (DeviceRepository, and DeviceBatchRepository for the importer).
 * Site-restricted callers see only the devices of their sites (restrictive policy, migration
 * 1763700950000). Inserts and updates run the dynamic-group membership triggers (migration
 * 1763700400000) as any statement does.
 */
@Entity({ name: 'devices' })
export class DeviceEntity extends IdTimestampedEntity {
  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @Column({ name: 'site_id', type: 'uuid' })
  siteId: string;

  @Column({ type: 'varchar', length: 255 })
  hostname: string;

  /** Free-form operating-system family. */
  @Column({ name: 'os_type', type: 'varchar', length: 32, nullable: true })
  osType: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: DeviceStatus;
}
