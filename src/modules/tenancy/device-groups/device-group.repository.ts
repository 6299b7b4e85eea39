import { Injectable } from '@nestjs/common';
import { In, type Repository, type SelectQueryBuilder } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { DeviceEntity } from '../devices/device.entity';
import { DeviceGroupMemberEntity } from './device-group-member.entity';
import { DeviceGroupEntity } from './device-group.entity';

/** A group with the ids of the members the caller may see, in id order. */
export type DeviceGroupWithMembers = DeviceGroupEntity & { deviceIds: string[] };

/**
 * Each group's members as one array column beside the group's columns: an array subquery, which
 * find-options cannot state, so a list stays one statement and one row per group however large the
 * groups. Members are limited to the sites in :memberSites (null: all), so a restricted caller never
 * learns other sites' devices.
 */
const MEMBER_IDS = `array(
  SELECT m.device_id::text FROM device_group_members m
    JOIN devices d ON d.org_id = m.org_id AND d.id = m.device_id
   WHERE m.org_id = g.org_id AND m.group_id = g.id AND (CAST(:memberSites AS uuid[]) IS NULL OR d.site_id = ANY (CAST(:memberSites AS uuid[])))
   ORDER BY m.device_id)`;

async function withMembers(q: SelectQueryBuilder<DeviceGroupEntity>, siteIds: readonly string[] | null): Promise<DeviceGroupWithMembers[]> {
  const { entities, raw } = await q
    .addSelect(MEMBER_IDS, 'device_ids')
    .setParameter('memberSites', siteIds ? [...siteIds] : null)
    .getRawAndEntities<{ g_id: string; device_ids: string[] }>();
  const members = new Map(raw.map((r) => [r.g_id, r.device_ids]));
  return entities.map((g) => Object.assign(g, { deviceIds: members.get(g.id) ?? [] }));
}

/** Device groups and the members of static groups, through the request's transaction (DbService.repo). */
@Injectable()
export class DeviceGroupRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<DeviceGroupEntity>> {
    return this.db.repo(DeviceGroupEntity);
  }

  private members(): Promise<Repository<DeviceGroupMemberEntity>> {
    return this.db.repo(DeviceGroupMemberEntity);
  }

  /** `siteIds` null: every group; otherwise only groups bound to one of those sites. */
  async list(f: { orgId?: string; siteId?: string; siteIds: readonly string[] | null }): Promise<DeviceGroupWithMembers[]> {
    const q = (await this.repo()).createQueryBuilder('g');
    if (f.siteIds) q.andWhere('g.site_id = ANY (CAST(:siteIds AS uuid[]))', { siteIds: [...f.siteIds] });
    if (f.orgId) q.andWhere('g.org_id = :orgId', { orgId: f.orgId });
    if (f.siteId) q.andWhere('g.site_id = :siteId', { siteId: f.siteId });
    return withMembers(q.orderBy('g.org_id').addOrderBy('g.name').addOrderBy('g.id'), f.siteIds);
  }

  async find(id: string, siteIds: readonly string[] | null): Promise<DeviceGroupWithMembers | null> {
    const [group] = await withMembers((await this.repo()).createQueryBuilder('g').where('g.id = :id', { id }), siteIds);
    return group ?? null;
  }

  /** A static group (the kind's default); its new id. */
  async insert(g: { orgId: string; siteId: string | null; name: string }): Promise<string> {
    const { identifiers } = await (await this.repo()).insert(g);
    return (identifiers[0] as { id: string }).id;
  }

  /** `siteId` undefined keeps the site; null makes the group organization-wide; updated_at is set on every update. */
  async update(id: string, patch: { name?: string; siteId?: string | null }): Promise<number> {
    const { affected } = await (await this.repo()).update({ id }, { name: patch.name, siteId: patch.siteId });
    return affected ?? 0;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id })).affected ?? 0;
  }

  /** The devices of the organization among these ids (the devices module's table, read through its entity). */
  async devicesInOrg(orgId: string, deviceIds: readonly string[]): Promise<Pick<DeviceEntity, 'id' | 'siteId'>[]> {
    return (await this.db.repo(DeviceEntity)).find({ select: { id: true, siteId: true }, where: { orgId, id: In([...deviceIds]) } });
  }

  /** How many were added: a device already in the group is left as it is (ON CONFLICT DO NOTHING, counted by RETURNING). */
  async addMembers(orgId: string, groupId: string, deviceIds: readonly string[]): Promise<number> {
    const { raw } = await (await this.members())
      .createQueryBuilder()
      .insert()
      .values(deviceIds.map((deviceId) => ({ orgId, groupId, deviceId })))
      .orIgnore()
      .returning('device_id')
      .updateEntity(false)
      .execute();
    return (raw as unknown[]).length;
  }

  async removeMember(orgId: string, groupId: string, deviceId: string): Promise<number> {
    return (await (await this.members()).delete({ orgId, groupId, deviceId })).affected ?? 0;
  }
}
