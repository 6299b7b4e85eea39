import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import type { CustomFieldType, CustomFieldValidation, CustomFieldValue } from './custom-field-value.util';

export interface CustomFieldRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  key: string;
  name: string;
  description: string | null;
  type: CustomFieldType;
  options: string[];
  validation: CustomFieldValidation;
  created_at: Date;
  updated_at: Date;
}

export interface CustomFieldValueRow {
  definition_id: string;
  key: string;
  name: string;
  type: CustomFieldType;
  value: CustomFieldValue;
  updated_at: Date;
}

export interface DeviceRef {
  id: string;
  org_id: string;
  site_id: string;
  partner_id: string;
}

/** A dynamic group whose filter names the custom field `$1`. */
const USES_FIELD = `g.kind = 'dynamic' AND jsonb_path_exists(g.filter, '$.** ? (@.customField == $id)', jsonb_build_object('id', $1::text))`;

@Injectable()
export class CustomFieldRepository {
  constructor(private readonly db: Db) {}

  /** `orgId`: the fields that apply to it (partner-wide ones of its partner and its own). */
  list(f: { orgId?: string; scope?: 'partner' | 'organization' }): Promise<CustomFieldRow[]> {
    return this.db.rows<CustomFieldRow>(
      `SELECT d.* FROM custom_field_definitions d
        WHERE ($1::uuid IS NULL OR d.org_id = $1 OR d.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = $1))
          AND ($2::text IS NULL OR ($2 = 'partner') = (d.partner_id IS NOT NULL))
        ORDER BY d.key, d.org_id NULLS FIRST, d.id`,
      [f.orgId ?? null, f.scope ?? null],
    );
  }

  find(id: string): Promise<CustomFieldRow | null> {
    return this.db.one<CustomFieldRow>(`SELECT * FROM custom_field_definitions WHERE id = $1`, [id]);
  }

  /**
   * Whether `key` is already used by a field the same organizations see: for an organization
   * field, a partner-wide field of its partner; for a partner-wide field, any organization's
   * field. Run in system context: the caller may not see every organization of the partner.
   */
  async keyClash(owner: { partnerId: string | null; orgId: string | null }, key: string): Promise<boolean> {
    const row = await this.db.one(
      owner.orgId
        ? `SELECT 1 FROM custom_field_definitions d JOIN organizations o ON o.partner_id = d.partner_id WHERE o.id = $1 AND d.key = $2`
        : `SELECT 1 FROM custom_field_definitions d JOIN organizations o ON o.id = d.org_id WHERE o.partner_id = $1 AND d.key = $2`,
      [owner.orgId ?? owner.partnerId, key],
    );
    return row !== null;
  }

  insert(d: { partnerId: string | null; orgId: string | null; key: string; name: string; description: string | null; type: CustomFieldType; options: string[]; validation: CustomFieldValidation }): Promise<CustomFieldRow | null> {
    return this.db.one<CustomFieldRow>(
      `INSERT INTO custom_field_definitions (partner_id, org_id, key, name, description, type, options, validation)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb) RETURNING *`,
      [d.partnerId, d.orgId, d.key, d.name, d.description, d.type, JSON.stringify(d.options), JSON.stringify(d.validation)],
    );
  }

  update(id: string, d: { name: string; description: string | null; options: string[]; validation: CustomFieldValidation }): Promise<CustomFieldRow | null> {
    return this.db.one<CustomFieldRow>(
      `UPDATE custom_field_definitions SET name = $2, description = $3, options = $4::jsonb, validation = $5::jsonb, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [id, d.name, d.description, JSON.stringify(d.options), JSON.stringify(d.validation)],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM custom_field_definitions WHERE id = $1`, [id]);
  }

  /** Options among `options` that some device value still uses (system context: every organization). */
  async optionsInUse(id: string, options: string[]): Promise<string[]> {
    if (!options.length) return [];
    const rows = await this.db.rows<{ option: string }>(
      `SELECT o AS option FROM unnest($2::text[]) o
        WHERE EXISTS (SELECT 1 FROM custom_field_values v WHERE v.definition_id = $1 AND (v.value = to_jsonb(o) OR v.value @> jsonb_build_array(o)))`,
      [id, options],
    );
    return rows.map((r) => r.option);
  }

  /** Whether any dynamic group filters on the field; run in system context, it sees every organization. */
  async isUsedByGroups(id: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM device_groups g WHERE ${USES_FIELD} LIMIT 1`, [id])) !== null;
  }

  /**
   * The dynamic groups filtering on the field that the caller can see: in the request's scope
   * (row-level security: reachable organizations) and, for a site-restricted caller, bound to
   * one of their sites, as in the group list. Never run in system context.
   */
  async visibleGroupsUsing(id: string, siteIds: readonly string[] | null): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      `SELECT g.id FROM device_groups g WHERE ${USES_FIELD} AND ($2::uuid[] IS NULL OR g.site_id = ANY ($2)) ORDER BY g.id`,
      [id, siteIds],
    );
    return rows.map((r) => r.id);
  }

  countValues(id: string): Promise<{ n: string } | null> {
    return this.db.one<{ n: string }>(`SELECT count(*) AS n FROM custom_field_values WHERE definition_id = $1`, [id]);
  }

  device(id: string): Promise<DeviceRef | null> {
    return this.db.one<DeviceRef>(
      `SELECT d.id, d.org_id, d.site_id, o.partner_id FROM devices d JOIN organizations o ON o.id = d.org_id WHERE d.id = $1`,
      [id],
    );
  }

  values(orgId: string, deviceId: string, definitionId?: string): Promise<CustomFieldValueRow[]> {
    return this.db.rows<CustomFieldValueRow>(
      `SELECT v.definition_id, d.key, d.name, d.type, v.value, v.updated_at
         FROM custom_field_values v JOIN custom_field_definitions d ON d.id = v.definition_id
        WHERE v.org_id = $1 AND v.device_id = $2 AND ($3::uuid IS NULL OR v.definition_id = $3)
        ORDER BY d.key, v.definition_id`,
      [orgId, deviceId, definitionId ?? null],
    );
  }

  upsertValue(orgId: string, deviceId: string, definitionId: string, value: CustomFieldValue): Promise<number> {
    return this.db.exec(
      `INSERT INTO custom_field_values (org_id, device_id, definition_id, value) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (org_id, device_id, definition_id) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
       WHERE custom_field_values.value IS DISTINCT FROM EXCLUDED.value`,
      [orgId, deviceId, definitionId, JSON.stringify(value)],
    );
  }

  deleteValue(orgId: string, deviceId: string, definitionId: string): Promise<number> {
    return this.db.exec(`DELETE FROM custom_field_values WHERE org_id = $1 AND device_id = $2 AND definition_id = $3`, [orgId, deviceId, definitionId]);
  }
}
