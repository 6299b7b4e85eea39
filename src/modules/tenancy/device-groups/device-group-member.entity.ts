import { Entity, PrimaryColumn } from 'typeorm';

/**
 * device_group_members (migration 1763700000000): a device in a group of the same organization.
 * Written by DeviceGroupRepository for static groups; a trigger refuses a hand-written member of a
 * dynamic group, whose members the database computes (migration 1763700400000).
 */
@Entity({ name: 'device_group_members' })
export class DeviceGroupMemberEntity {
  @PrimaryColumn({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @PrimaryColumn({ name: 'group_id', type: 'uuid' })
  groupId: string;

  @PrimaryColumn({ name: 'device_id', type: 'uuid' })
  deviceId: string;
}
