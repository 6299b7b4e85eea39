import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity, Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { DeviceGroupEntity } from './device-group.entity';

export interface DynamicGroupRecord {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  kind: string;
  filter: Record<string, unknown> | null;
}

export interface DynamicGroupWrite {
  siteId: string | null;
  name: string;
  filter: object;
}

/**
 * The writes of dynamic device groups (kind 'dynamic', members computed from their filter by the
 * database's triggers in the same statement), for the policies module's dynamic groups and the
 * importer. Device groups belong to tenancy, which alone writes them.
 */
@Injectable()
export class DynamicDeviceGroupRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<DeviceGroupEntity>> {
    return this.db.repo(DeviceGroupEntity);
  }

  /**
   * Every group (static and dynamic) of these organizations, as the column-named records the
   * importer and the policies module compare and copy (as the importer's batch repositories keep
   * theirs); one set-based statement for a whole import.
   */
  ofOrgs(orgIds: string[]): Promise<DynamicGroupRecord[]> {
    return this.db.rows(`SELECT id, org_id, site_id, name, kind, filter FROM device_groups WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  /** Inserting the row runs the membership recompute trigger in the same transaction. */
  async insert(id: string, orgId: string, g: DynamicGroupWrite): Promise<{ id: string }> {
    // The filter is jsonb of a shape the caller checked; TypeORM's partial types cannot describe `unknown` values.
    await (await this.repo()).insert({ id, orgId, siteId: g.siteId, name: g.name, kind: 'dynamic', filter: g.filter } as QueryDeepPartialEntity<DeviceGroupEntity>);
    return { id };
  }

  /** A changed filter or site recomputes the members (trigger); a static group is left alone. */
  async update(id: string, g: DynamicGroupWrite): Promise<number> {
    const values = { siteId: g.siteId, name: g.name, filter: g.filter } as QueryDeepPartialEntity<DeviceGroupEntity>;
    return (await (await this.repo()).update({ id, kind: 'dynamic' }, values)).affected ?? 0;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id, kind: 'dynamic' })).affected ?? 0;
  }
}
