import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';

export type DeviceGroupKind = 'static' | 'dynamic';

/**
 * device_groups (migrations 1763700000000, 1763700400000): a named set of devices of one
 * organization, bound to one site or organization-wide (`site_id` null); names are unique within
 * the organization. A static group's members are written by hand (DeviceGroupMemberEntity); a
 * dynamic group's are computed from its `filter` by the database's triggers. Written only by the
 * device-groups repositories. Site-restricted callers see only groups of their sites
 * (restrictive policy, migration 1763700950000).
 */
@Entity({ name: 'device_groups' })
export class DeviceGroupEntity extends IdTimestampedEntity {
  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @Column({ name: 'site_id', type: 'uuid', nullable: true })
  siteId: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 16 })
  kind: DeviceGroupKind;

  /** A dynamic group's filter (null for a static group: a CHECK ties the two). */
  @Column({ type: 'jsonb', nullable: true })
  filter: Record<string, unknown> | null;
}
