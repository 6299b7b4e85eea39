import { Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import type { RoleScope } from './role.dto';
import { RoleEntity } from './role.entity';

/** The only writer of roles, through the request's transaction (DbService.repo). */
@Injectable()
export class RoleRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<RoleEntity>> {
    return this.db.repo(RoleEntity);
  }

  /** Partner roles first, then by organization and name without regard to case: a query builder, as find options cannot order by lower(name). */
  async list(f: { orgId?: string; scope?: RoleScope }): Promise<RoleEntity[]> {
    const q = (await this.repo()).createQueryBuilder('r');
    if (f.orgId) q.andWhere('r.org_id = :orgId', { orgId: f.orgId });
    if (f.scope) q.andWhere('r.scope = :scope', { scope: f.scope });
    return q.orderBy('r.scope', 'DESC').addOrderBy('r.org_id', 'ASC', 'NULLS FIRST').addOrderBy('lower(r.name)', 'ASC').addOrderBy('r.id', 'ASC').getMany();
  }

  async find(id: string): Promise<RoleEntity | null> {
    return (await this.repo()).findOneBy({ id });
  }

  /** The row as stored: the INSERT's RETURNING clause fills in the id and timestamps. */
  async insert(r: { scope: RoleScope; orgId: string | null; partnerId: string | null; name: string; permissions: string[] }): Promise<RoleEntity> {
    const repo = await this.repo();
    const row = repo.create(r);
    await repo.insert(row);
    return row;
  }

  /** Absent fields keep their value; updated_at is set on every update. Null when the caller cannot see the role. */
  async update(id: string, patch: { name?: string; permissions?: string[] }): Promise<RoleEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, { name: patch.name, permissions: patch.permissions });
    return affected ? repo.findOneBy({ id }) : null;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id })).affected ?? 0;
  }
}
