import { Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import type { CustomFieldValue } from './custom-field-value.util';
import { CustomFieldValueEntity, type CustomFieldValueWithDefinition } from './custom-field-value.entity';
import { CustomFieldEntity } from './custom-field.entity';

export type NewCustomField = Pick<CustomFieldEntity, 'partnerId' | 'orgId' | 'key' | 'name' | 'description' | 'type' | 'options' | 'validation'>;

export interface DeviceRef {
  id: string;
  org_id: string;
  site_id: string;
  partner_id: string;
}

/** A dynamic group whose filter names the custom field `$1`. */
const USES_FIELD = `g.kind = 'dynamic' AND jsonb_path_exists(g.filter, '$.** ? (@.customField == $id)', jsonb_build_object('id', $1::text))`;

/**
 * Definitions and device values are entities, written through the request's transaction
 * (DbService.repo). The checks that search other tables (key clashes across the partner, options in
 * use by device values, dynamic groups filtering on a field with a JSON path) stay SQL.
 */
@Injectable()
export class CustomFieldRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<CustomFieldEntity>> {
    return this.db.repo(CustomFieldEntity);
  }

  private values$(): Promise<Repository<CustomFieldValueEntity>> {
    return this.db.repo(CustomFieldValueEntity);
  }

  /** `orgId`: the fields that apply to it (partner-wide ones of its partner and its own). A query builder, for the owner test through the organization. */
  async list(f: { orgId?: string; scope?: 'partner' | 'organization' }): Promise<CustomFieldEntity[]> {
    const q = (await this.repo()).createQueryBuilder('d');
    if (f.orgId) q.andWhere('(d.org_id = :orgId OR d.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = :orgId))', { orgId: f.orgId });
    if (f.scope) q.andWhere(f.scope === 'partner' ? 'd.partner_id IS NOT NULL' : 'd.partner_id IS NULL');
    return q.orderBy('d.key').addOrderBy('d.org_id', 'ASC', 'NULLS FIRST').addOrderBy('d.id').getMany();
  }

  async find(id: string): Promise<CustomFieldEntity | null> {
    return (await this.repo()).findOneBy({ id });
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

  /** Read back after the write: jsonb comes back in PostgreSQL's key order, as responses always showed it. */
  async insert(d: NewCustomField): Promise<CustomFieldEntity> {
    const repo = await this.repo();
    const row = repo.create(d);
    await repo.insert(row);
    return repo.findOneByOrFail({ id: row.id });
  }

  async update(id: string, d: Pick<CustomFieldEntity, 'name' | 'description' | 'options' | 'validation'>): Promise<CustomFieldEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, { name: d.name, description: d.description, options: d.options, validation: d.validation });
    return affected ? repo.findOneBy({ id }) : null;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id })).affected ?? 0;
  }

  /**
   * Options among `options` that some device value still uses (system context: every organization).
   * SQL: a set of candidate options tested with jsonb equality and containment.
   */
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

  /** How many device values the field has (system context: every organization). */
  async countValues(id: string): Promise<number> {
    return (await this.values$()).countBy({ definitionId: id });
  }

  device(id: string): Promise<DeviceRef | null> {
    return this.db.one<DeviceRef>(
      `SELECT d.id, d.org_id, d.site_id, o.partner_id FROM devices d JOIN organizations o ON o.id = d.org_id WHERE d.id = $1`,
      [id],
    );
  }

  /** A device's values with their definitions, by key. Inner join: a value shows only with a definition the caller sees. */
  async values(orgId: string, deviceId: string, definitionId?: string): Promise<CustomFieldValueWithDefinition[]> {
    const q = (await this.values$()).createQueryBuilder('v').innerJoinAndSelect('v.definition', 'd').where('v.org_id = :orgId AND v.device_id = :deviceId', { orgId, deviceId });
    if (definitionId) q.andWhere('v.definition_id = :definitionId', { definitionId });
    return (await q.orderBy('d.key').addOrderBy('v.definition_id').getMany()) as CustomFieldValueWithDefinition[];
  }

  /**
   * Writes the value; 0 when it was already stored as is (INSERT … ON CONFLICT DO UPDATE … WHERE the
   * value IS DISTINCT FROM the stored one, updated_at set to its default), so an unchanged value
   * keeps its updated_at and is not audited. The RETURNING clause answers a row only when it wrote one.
   */
  async upsertValue(orgId: string, deviceId: string, definitionId: string, value: CustomFieldValue): Promise<number> {
    const repo = await this.values$();
    const { raw } = await repo.upsert(repo.create({ orgId, deviceId, definitionId, value }), {
      conflictPaths: ['orgId', 'deviceId', 'definitionId'],
      skipUpdateIfNoValuesChanged: true,
    });
    return (raw as unknown[]).length;
  }

  async deleteValue(orgId: string, deviceId: string, definitionId: string): Promise<number> {
    return (await (await this.values$()).delete({ orgId, deviceId, definitionId })).affected ?? 0;
  }
}
