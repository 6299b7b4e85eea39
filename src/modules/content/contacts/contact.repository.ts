import { pastTheEnd } from '../../../common/pagination.dto';
import { Injectable } from '@nestjs/common';
import type { Repository, SelectQueryBuilder } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { SiteEntity } from '../../tenancy/sites/site.entity';
import { ContactEntity } from './contact.entity';

export type ContactWrite = Pick<ContactEntity, 'siteId' | 'name' | 'email' | 'phones' | 'title' | 'notes' | 'externalId'>;

export interface ContactFilter {
  orgId?: string;
  siteId?: string;
  q?: string;
  externalId?: string;
  /** null: every site; otherwise organization-level contacts and contacts of these sites. */
  siteIds: readonly string[] | null;
  limit: number;
  offset: number;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function filtered(q: SelectQueryBuilder<ContactEntity>, f: ContactFilter): SelectQueryBuilder<ContactEntity> {
  if (f.orgId) q.andWhere('c.org_id = :orgId', { orgId: f.orgId });
  if (f.siteId) q.andWhere('c.site_id = :siteId', { siteId: f.siteId });
  if (f.q) q.andWhere('(c.name ILIKE :q OR c.email ILIKE :q OR c.title ILIKE :q)', { q: `%${likeEscape(f.q)}%` });
  if (f.externalId) q.andWhere('c.external_id = :externalId', { externalId: f.externalId });
  if (f.siteIds) q.andWhere('(c.site_id IS NULL OR c.site_id = ANY (CAST(:siteIds AS uuid[])))', { siteIds: [...f.siteIds] });
  return q;
}

/** The only writer of contacts outside the importer's batches, through the request's transaction (DbService.repo). */
@Injectable()
export class ContactRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<ContactEntity>> {
    return this.db.repo(ContactEntity);
  }

  /** A page and the total in one statement (query builder: a window count and the case-insensitive order). */
  async list(f: ContactFilter): Promise<{ rows: ContactEntity[]; total: number }> {
    const repo = await this.repo();
    const page = filtered(repo.createQueryBuilder('c'), f)
      .addSelect('count(*) OVER ()', 'total')
      .orderBy('lower(c.name)')
      .addOrderBy('c.id')
      .limit(f.limit)
      .offset(pastTheEnd(f.offset));
    const { entities, raw } = await page.getRawAndEntities<{ total: string }>();
    if (entities.length) return { rows: entities, total: Number(raw[0].total) };
    // A page past the end still reports how many there are.
    return { rows: [], total: f.offset > 0 ? await filtered(repo.createQueryBuilder('c'), f).getCount() : 0 };
  }

  async find(id: string): Promise<ContactEntity | null> {
    return (await this.repo()).findOneBy({ id });
  }

  /** The organization of a site (tenancy's table, read through its entity). */
  async siteOrg(siteId: string): Promise<{ orgId: string } | null> {
    return (await this.db.repo(SiteEntity)).findOne({ select: { orgId: true }, where: { id: siteId } });
  }

  /** Read back after the write: jsonb comes back in PostgreSQL's key order, as responses always showed it. */
  async insert(orgId: string, c: ContactWrite): Promise<ContactEntity> {
    const repo = await this.repo();
    const row = repo.create({ orgId, ...c });
    await repo.insert(row);
    return repo.findOneByOrFail({ id: row.id });
  }

  async update(id: string, c: ContactWrite): Promise<ContactEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, c);
    return affected ? repo.findOneBy({ id }) : null;
  }

  async delete(id: string): Promise<number> {
    return (await (await this.repo()).delete({ id })).affected ?? 0;
  }
}
