import { Injectable } from '@nestjs/common';
import { In, type FindOptionsWhere, type Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { SiteEntity } from './site.entity';

/** Sites as the transaction's row-level security lets it see them, through the request's transaction (DbService.repo). */
@Injectable()
export class SiteRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<SiteEntity>> {
    return this.db.repo(SiteEntity);
  }

  /** `siteIds` null: every site the transaction can see. */
  async list(f: { orgId?: string; siteIds: readonly string[] | null }): Promise<SiteEntity[]> {
    if (f.siteIds?.length === 0) return [];
    const where: FindOptionsWhere<SiteEntity> = {};
    if (f.orgId) where.orgId = f.orgId;
    if (f.siteIds) where.id = In([...f.siteIds]);
    return (await this.repo()).find({ where, order: { orgId: 'ASC', name: 'ASC', id: 'ASC' } });
  }

  async find(id: string): Promise<SiteEntity | null> {
    return (await this.repo()).findOneBy({ id });
  }

  async findMany(ids: readonly string[]): Promise<SiteEntity[]> {
    if (ids.length === 0) return [];
    return (await this.repo()).findBy({ id: In([...ids]) });
  }

  /** The row as stored: the INSERT's RETURNING clause fills in the id and timestamps. */
  async insert(s: { orgId: string; name: string; timezone: string }): Promise<SiteEntity> {
    const repo = await this.repo();
    const row = repo.create(s);
    await repo.insert(row);
    return row;
  }

  /** Absent fields keep their value; updated_at is set on every update. Null when the caller cannot see the site. */
  async update(id: string, patch: { name?: string; timezone?: string }): Promise<SiteEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, { name: patch.name, timezone: patch.timezone });
    return affected ? repo.findOneBy({ id }) : null;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id })).affected ?? 0;
  }
}
