import { Injectable } from '@nestjs/common';
import { IsNull, type Repository, type SelectQueryBuilder } from 'typeorm';
import { pastTheEnd } from '../../../common/pagination.dto';
import { DbService } from '../../../infra/database/db.service';
import { AgentEntity } from './agent.entity';
import type { AgentStatus, DeviceStatus } from './device.dto';
import { DeviceEntity } from './device.entity';

/** A device with its enrolled (not revoked) agent; null when it has none (the left join's answer). */
export type DeviceWithAgent = DeviceEntity & { agent: AgentEntity | null };

export interface DeviceFilter {
  orgId?: string;
  siteId?: string;
  status?: DeviceStatus;
  search?: string;
  /** With `seenSince`, the instant after which a last sighting counts as online. */
  agentStatus?: AgentStatus;
  seenSince?: Date;
  /** null: every site. */
  siteIds: readonly string[] | null;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, '\\$&');

function filtered<T extends DeviceEntity>(q: SelectQueryBuilder<T>, f: DeviceFilter): SelectQueryBuilder<T> {
  if (f.siteIds) q.andWhere('d.site_id = ANY (CAST(:siteIds AS uuid[]))', { siteIds: [...f.siteIds] });
  if (f.orgId) q.andWhere('d.org_id = :orgId', { orgId: f.orgId });
  if (f.siteId) q.andWhere('d.site_id = :siteId', { siteId: f.siteId });
  if (f.status) q.andWhere('d.status = :status', { status: f.status });
  if (f.search !== undefined) q.andWhere('d.hostname ILIKE :search', { search: `%${likeEscape(f.search)}%` });
  // On the left-joined live agent: no agent, or one that never called, is `never`.
  if (f.agentStatus === 'never') q.andWhere('a.last_seen_at IS NULL');
  if (f.agentStatus === 'online') q.andWhere('a.last_seen_at >= :seenSince', { seenSince: f.seenSince });
  if (f.agentStatus === 'offline') q.andWhere('a.last_seen_at < :seenSince', { seenSince: f.seenSince });
  return q;
}

/**
 * Devices and their agents' enrolment, through the request's transaction (DbService.repo). Nothing here
 * runs on an agent's route: agent authentication and ingest read devices and agents with their own
 * SQL (principal.repository.ts, elevation-ingest.repository.ts).
 */
@Injectable()
export class DeviceRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<DeviceEntity>> {
    return this.db.repo(DeviceEntity);
  }

  private agents(): Promise<Repository<AgentEntity>> {
    return this.db.repo(AgentEntity);
  }

  /**
   * The device with its live agent: a join find-options cannot state (the agent is matched on the organization too, and only while not revoked).
   * The mapped join sets `agent` on every row, null without a match; TypeORM's types cannot say so, hence the cast.
   */
  private async withAgent(): Promise<SelectQueryBuilder<DeviceWithAgent>> {
    return (await this.repo())
      .createQueryBuilder('d')
      .leftJoinAndMapOne('d.agent', AgentEntity, 'a', 'a.org_id = d.org_id AND a.device_id = d.id AND a.revoked_at IS NULL') as SelectQueryBuilder<DeviceWithAgent>;
  }

  /**
   * A page and the total in one statement (query builder: the agent join, a window count and the
   * case-insensitive order). A device has at most one live agent, so the join adds no rows.
   */
  async list(f: DeviceFilter, page: { limit: number; offset: number }): Promise<{ rows: DeviceWithAgent[]; total: number }> {
    const q = filtered(await this.withAgent(), f)
      .addSelect('count(*) OVER ()', 'total')
      .orderBy('d.org_id')
      .addOrderBy('lower(d.hostname)')
      .addOrderBy('d.id')
      .limit(page.limit)
      .offset(pastTheEnd(page.offset));
    const { entities, raw } = await q.getRawAndEntities<{ total: string }>();
    if (entities.length) return { rows: entities, total: Number(raw[0].total) };
    // A page past the end still reports how many there are.
    // The agent join only when the agent's state is filtered on.
    const counted = f.agentStatus ? await this.withAgent() : (await this.repo()).createQueryBuilder('d');
    return { rows: [], total: page.offset > 0 ? await filtered(counted, f).getCount() : 0 };
  }

  async find(id: string): Promise<DeviceWithAgent | null> {
    return (await this.withAgent()).where('d.id = :id', { id }).getOne();
  }

  /** Locks the device row so concurrent enrollments of one device run one after the other. */
  async lock(id: string): Promise<Pick<DeviceEntity, 'id' | 'orgId' | 'siteId' | 'status'> | null> {
    return (await this.repo()).findOne({ select: { id: true, orgId: true, siteId: true, status: true }, where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The new row; its status is the column default, read back with the rest by the caller. */
  async insert(d: { orgId: string; siteId: string; hostname: string; osType: string | null }): Promise<DeviceEntity> {
    const repo = await this.repo();
    const row = repo.create(d);
    await repo.insert(row);
    return row;
  }

  /** Absent fields keep their value; `osType` null clears it; updated_at is set on every update. */
  async update(id: string, patch: { hostname?: string; siteId?: string; status?: DeviceStatus; osType?: string | null }): Promise<number> {
    const { affected } = await (await this.repo()).update({ id }, { hostname: patch.hostname, siteId: patch.siteId, status: patch.status, osType: patch.osType });
    return affected ?? 0;
  }

  async revokeAgents(orgId: string, deviceId: string): Promise<number> {
    const { affected } = await (await this.agents()).update({ orgId, deviceId, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
    return affected ?? 0;
  }

  async insertAgent(a: { id: string; orgId: string; deviceId: string; tokenHash: string }): Promise<void> {
    const repo = await this.agents();
    await repo.insert(repo.create(a));
  }
}
