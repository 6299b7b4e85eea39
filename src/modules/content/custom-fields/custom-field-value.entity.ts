import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CustomFieldValue } from './custom-field-value.util';
import { CustomFieldEntity } from './custom-field.entity';

/**
 * custom_field_values (migration 1763700400000): one device's value of one custom field, keyed by
 * (org_id, device_id, definition_id); no created_at. Statement triggers check that the definition
 * applies to the device's organization and bring dynamic groups in line after every write.
 * Written by CustomFieldRepository (one device's value, as an entity) and by
 * CustomFieldBatchRepository (the importer's set-based upsert, SQL).
 */
@Entity({ name: 'custom_field_values' })
export class CustomFieldValueEntity {
  @PrimaryColumn({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @PrimaryColumn({ name: 'device_id', type: 'uuid' })
  deviceId: string;

  @PrimaryColumn({ name: 'definition_id', type: 'uuid' })
  definitionId: string;

  /** Loaded only when a read asks for it (the key, name and type a value is shown with). */
  @ManyToOne(() => CustomFieldEntity, { createForeignKeyConstraints: false })
  @JoinColumn({ name: 'definition_id' })
  definition?: CustomFieldEntity;

  /** Checked against the definition (checkValue) before it is written. */
  @Column({ type: 'jsonb' })
  value: CustomFieldValue;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A value with its definition, as a device's values are listed. */
export type CustomFieldValueWithDefinition = CustomFieldValueEntity & { definition: CustomFieldEntity };
