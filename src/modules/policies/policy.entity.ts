import { Column, Entity } from 'typeorm';
import { IdCreatedEntity, IdTimestampedEntity } from '../../infra/database/entity-base';
import type { PolicyType } from './features/policy-feature.types';
import type { TargetType } from './policy.dto';

/**
 * policies (migration 1763700400000): a configuration or patch policy owned partner-wide
 * (partnerId) or by one organization (orgId); exactly one is set. Names are unique per owner and
 * type without regard to case. Written only by the policies repositories (PolicyRepository, and
 * PolicyBatchRepository for the importer).
 */
@Entity({ name: 'policies' })
export class PolicyEntity extends IdTimestampedEntity {
  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ type: 'varchar', length: 16 })
  type: PolicyType;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 2000, nullable: true })
  description: string | null;

  @Column({ type: 'boolean' })
  enabled: boolean;

  /** Settings per feature, checked by the feature registry before every write. */
  @Column({ type: 'jsonb' })
  features: Record<string, unknown>;
}

/**
 * policy_assignments (migration 1763700400000): one policy on one target. partnerId is always the
 * target's partner and orgId its organization (null at partner level); CHECKs tie the target
 * columns to the level. Written only by the policies repositories.
 */
@Entity({ name: 'policy_assignments' })
export class PolicyAssignmentEntity extends IdCreatedEntity {
  @Column({ name: 'partner_id', type: 'uuid' })
  partnerId: string;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'policy_id', type: 'uuid' })
  policyId: string;

  @Column({ name: 'target_level', type: 'varchar', length: 16 })
  targetLevel: TargetType;

  @Column({ name: 'site_id', type: 'uuid', nullable: true })
  siteId: string | null;

  @Column({ name: 'device_group_id', type: 'uuid', nullable: true })
  deviceGroupId: string | null;

  @Column({ name: 'device_id', type: 'uuid', nullable: true })
  deviceId: string | null;

  @Column({ type: 'integer' })
  priority: number;
}
