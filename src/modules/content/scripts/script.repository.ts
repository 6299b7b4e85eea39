import { pastTheEnd } from '../../../common/pagination.dto';
import { Injectable } from '@nestjs/common';
import type { Repository, SelectQueryBuilder } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { ScriptEntity, type ScriptSummary } from './script.entity';

export type ScriptWrite = Pick<ScriptEntity, 'name' | 'description' | 'category' | 'language' | 'body' | 'parameters' | 'runAs' | 'timeoutSeconds' | 'exitCodeSeverityMapping'>;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

type ScriptFilter = { orgId?: string; availability?: string; category?: string; language?: string; q?: string };

function filtered(q: SelectQueryBuilder<ScriptEntity>, f: ScriptFilter): SelectQueryBuilder<ScriptEntity> {
  if (f.orgId) q.andWhere('(s.org_id = :orgId OR s.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = :orgId))', { orgId: f.orgId });
  if (f.availability) q.andWhere(f.availability === 'partner' ? 's.partner_id IS NOT NULL' : 's.partner_id IS NULL');
  if (f.category) q.andWhere('lower(s.category) = lower(:category)', { category: f.category });
  if (f.language) q.andWhere('s.language = :language', { language: f.language });
  if (f.q) q.andWhere('s.name ILIKE :q', { q: `%${likeEscape(f.q)}%` });
  return q;
}

/** The only writer of scripts outside the importer's batches, through the request's transaction (DbService.repo). */
@Injectable()
export class ScriptRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<ScriptEntity>> {
    return this.db.repo(ScriptEntity);
  }

  /**
   * A page of summaries and the total, in one statement: a query builder, for the owner test
   * through the organization's partner, the case-insensitive order and the window count.
   */
  async list(f: ScriptFilter & { limit: number; offset: number }): Promise<{ rows: ScriptSummary[]; total: number }> {
    const repo = await this.repo();
    const page = filtered(repo.createQueryBuilder('s'), f)
      .select(['s.id', 's.partnerId', 's.orgId', 's.name', 's.description', 's.category', 's.language', 's.parameters', 's.runAs', 's.timeoutSeconds', 's.exitCodeSeverityMapping', 's.createdAt', 's.updatedAt'])
      .addSelect('count(*) OVER ()', 'total')
      .orderBy('lower(s.category)')
      .addOrderBy('lower(s.name)')
      .addOrderBy('s.id')
      .limit(f.limit)
      .offset(pastTheEnd(f.offset));
    const { entities, raw } = await page.getRawAndEntities<{ total: string }>();
    if (entities.length) return { rows: entities, total: Number(raw[0].total) };
    // A page past the end still reports how many there are (the window count has no row to ride on).
    return { rows: [], total: f.offset > 0 ? await filtered(repo.createQueryBuilder('s'), f).getCount() : 0 };
  }

  async find(id: string): Promise<ScriptEntity | null> {
    return (await this.repo()).findOneBy({ id });
  }

  /** Read back after the write: jsonb comes back in PostgreSQL's key order, as responses always showed it. */
  async insert(owner: { partnerId: string | null; orgId: string | null }, s: ScriptWrite): Promise<ScriptEntity> {
    const repo = await this.repo();
    const row = repo.create({ ...owner, ...s });
    await repo.insert(row);
    return repo.findOneByOrFail({ id: row.id });
  }

  async update(id: string, s: ScriptWrite): Promise<ScriptEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, s);
    return affected ? repo.findOneBy({ id }) : null;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id })).affected ?? 0;
  }
}
