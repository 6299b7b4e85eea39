import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity, Repository } from 'typeorm';
import { DbService } from '../../infra/database/db.service';
import type { PolicyType } from './features/policy-feature.types';
import type { TargetType } from './policy.dto';
import { PolicyAssignmentEntity, PolicyEntity } from './policy.entity';

export interface AssignmentWrite {
  partnerId: string;
  orgId: string | null;
  policyId: string;
  level: TargetType;
  siteId: string | null;
  groupId: string | null;
  deviceId: string | null;
  priority: number;
}

/**
 * Policies and their assignments are entities, written through the request's transaction
 * (DbService.repo). The lookup of an assignment target reads tenancy's tables and stays SQL.
 */
@Injectable()
export class PolicyRepository {
  constructor(private readonly db: DbService) {}

  private policies(): Promise<Repository<PolicyEntity>> {
    return this.db.repo(PolicyEntity);
  }

  private assigned(): Promise<Repository<PolicyAssignmentEntity>> {
    return this.db.repo(PolicyAssignmentEntity);
  }

  /** A query builder: the owner test goes through the organization, and names sort without regard to case. */
  async list(f: { orgId?: string; type?: string; scope?: string }): Promise<PolicyEntity[]> {
    const q = (await this.policies()).createQueryBuilder('p');
    if (f.orgId) q.andWhere('(p.org_id = :orgId OR p.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = :orgId))', { orgId: f.orgId });
    if (f.type) q.andWhere('p.type = :type', { type: f.type });
    if (f.scope) q.andWhere(f.scope === 'partner' ? 'p.partner_id IS NOT NULL' : 'p.partner_id IS NULL');
    return q.orderBy('p.type').addOrderBy('lower(p.name)').addOrderBy('p.org_id', 'ASC', 'NULLS FIRST').addOrderBy('p.id').getMany();
  }

  async find(id: string): Promise<PolicyEntity | null> {
    return (await this.policies()).findOneBy({ id });
  }

  /** Read back after the write: jsonb comes back in PostgreSQL's key order, as responses always showed it. */
  async insert(p: { partnerId: string | null; orgId: string | null; type: PolicyType; name: string; description: string | null; enabled: boolean; features: object }): Promise<PolicyEntity> {
    const repo = await this.policies();
    // features is jsonb of a shape the feature registry checked; TypeORM's partial types cannot describe `unknown` values.
    const { identifiers } = await repo.insert({ ...p, features: p.features } as QueryDeepPartialEntity<PolicyEntity>);
    return repo.findOneByOrFail({ id: (identifiers[0] as { id: string }).id });
  }

  async update(id: string, p: { name: string; description: string | null; enabled: boolean; features: object }): Promise<PolicyEntity | null> {
    const repo = await this.policies();
    const values = { name: p.name, description: p.description, enabled: p.enabled, features: p.features } as QueryDeepPartialEntity<PolicyEntity>;
    const { affected } = await repo.update({ id }, values);
    return affected ? repo.findOneBy({ id }) : null;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.policies()).delete({ id })).affected ?? 0;
  }

  /** Partner level first, down to devices; then by priority and age. A query builder, for the order of the levels. */
  async assignments(policyId: string): Promise<PolicyAssignmentEntity[]> {
    return (await this.assigned())
      .createQueryBuilder('a')
      .where('a.policy_id = :policyId', { policyId })
      .orderBy(`array_position(ARRAY['partner', 'organization', 'site', 'device_group', 'device']::varchar[], a.target_level)`)
      .addOrderBy('a.priority')
      .addOrderBy('a.created_at')
      .addOrderBy('a.id')
      .getMany();
  }

  async findAssignment(policyId: string, id: string): Promise<PolicyAssignmentEntity | null> {
    return (await this.assigned()).findOneBy({ policyId, id });
  }

  /** The row as stored: the INSERT's RETURNING clause fills in the id and creation time. */
  async insertAssignment(a: AssignmentWrite): Promise<PolicyAssignmentEntity> {
    const repo = await this.assigned();
    const row = repo.create({
      partnerId: a.partnerId,
      orgId: a.orgId,
      policyId: a.policyId,
      targetLevel: a.level,
      siteId: a.siteId,
      deviceGroupId: a.groupId,
      deviceId: a.deviceId,
      priority: a.priority,
    });
    await repo.insert(row);
    return row;
  }

  async deleteAssignment(id: string): Promise<number> {
    return (await (await this.assigned()).delete({ id })).affected ?? 0;
  }

  /** The organization (and its partner) of a target the caller can see; null when invisible. */
  targetOrg(level: 'organization' | 'site' | 'device_group' | 'device', id: string): Promise<{ org_id: string; partner_id: string; site_id: string | null } | null> {
    const sql = {
      organization: `SELECT o.id AS org_id, o.partner_id, NULL::uuid AS site_id FROM organizations o WHERE o.id = $1`,
      site: `SELECT s.org_id, o.partner_id, s.id AS site_id FROM sites s JOIN organizations o ON o.id = s.org_id WHERE s.id = $1`,
      device_group: `SELECT g.org_id, o.partner_id, g.site_id FROM device_groups g JOIN organizations o ON o.id = g.org_id WHERE g.id = $1`,
      device: `SELECT d.org_id, o.partner_id, d.site_id FROM devices d JOIN organizations o ON o.id = d.org_id WHERE d.id = $1`,
    }[level];
    return this.db.one(sql, [id]);
  }
}
