import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { CustomFieldType, CustomFieldValidation, CustomFieldValue } from './custom-field-value.util';

/** A definition as the importer compares and writes it (column names). */
export interface CustomFieldRecord {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  key: string;
  name: string;
  description: string | null;
  type: CustomFieldType;
  options: string[];
  validation: CustomFieldValidation;
}

export interface CustomFieldValueRecord {
  org_id: string;
  device_id: string;
  definition_id: string;
  value: CustomFieldValue;
}

/** Custom field definitions and values written in bulk (the importer), through CustomFieldService, in the caller's transaction. */
@Injectable()
export class CustomFieldBatchRepository {
  constructor(private readonly db: DbService) {}

  /** The partner's own definitions and those of these organizations. */
  definitions(partnerId: string, orgIds: string[]): Promise<CustomFieldRecord[]> {
    return this.db.rows<CustomFieldRecord>(
      `SELECT id, partner_id, org_id, key, name, description, type, options, validation FROM custom_field_definitions
        WHERE partner_id = $1 OR org_id = ANY ($2::uuid[])`,
      [partnerId, orgIds],
    );
  }

  /** Keys of organization fields anywhere under the partner (a partner-wide key must not reuse one). */
  async orgFieldKeys(partnerId: string): Promise<Set<string>> {
    const rows = await this.db.rows<{ key: string }>(
      `SELECT DISTINCT d.key FROM custom_field_definitions d JOIN organizations o ON o.id = d.org_id WHERE o.partner_id = $1`,
      [partnerId],
    );
    return new Set(rows.map((r) => r.key));
  }

  async insertDefinition(d: CustomFieldRecord): Promise<void> {
    await this.db.exec(
      `INSERT INTO custom_field_definitions (id, partner_id, org_id, key, name, description, type, options, validation)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb)`,
      [d.id, d.partner_id, d.org_id, d.key, d.name, d.description, d.type, JSON.stringify(d.options), JSON.stringify(d.validation)],
    );
  }

  async updateDefinition(d: CustomFieldRecord): Promise<void> {
    await this.db.exec(
      `UPDATE custom_field_definitions SET name = $2, description = $3, options = $4::jsonb, validation = $5::jsonb, updated_at = now() WHERE id = $1`,
      [d.id, d.name, d.description, JSON.stringify(d.options), JSON.stringify(d.validation)],
    );
  }

  values(orgIds: string[]): Promise<CustomFieldValueRecord[]> {
    return this.db.rows(`SELECT org_id, device_id, definition_id, value FROM custom_field_values WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  /** Writes values; rows already present are replaced (the caller decides which rows to send). */
  async upsertValues(rows: CustomFieldValueRecord[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO custom_field_values (org_id, device_id, definition_id, value)
       SELECT x.org_id, x.device_id, x.definition_id, x.value
         FROM jsonb_to_recordset($1::jsonb) AS x(org_id uuid, device_id uuid, definition_id uuid, value jsonb)
       ON CONFLICT (org_id, device_id, definition_id) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [JSON.stringify(rows)],
    );
  }
}
