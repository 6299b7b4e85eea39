import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';
import type { CustomFieldType, CustomFieldValidation } from './custom-field-value.util';

/**
 * custom_field_definitions (migration 1763700400000): a field owned partner-wide (partnerId) or by
 * one organization (orgId); exactly one is set. Select types carry options (a CHECK). Written only
 * by the custom-field repositories (CustomFieldRepository, and CustomFieldBatchRepository for the
 * importer). Device values are CustomFieldValueEntity.
 */
@Entity({ name: 'custom_field_definitions' })
export class CustomFieldEntity extends IdTimestampedEntity {
  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ type: 'varchar', length: 64 })
  key: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 16 })
  type: CustomFieldType;

  @Column({ type: 'jsonb' })
  options: string[];

  @Column({ type: 'jsonb' })
  validation: CustomFieldValidation;
}
