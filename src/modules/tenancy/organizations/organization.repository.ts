import { Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { DbService, prepared } from '../../../infra/database/db.service';
import { isoTimestamp } from '../../../infra/database/sql-text';
import { OrganizationEntity, type OrganizationStatus } from './organization.entity';


const LIST = prepared(
  'organizations_list',
  `SELECT id, partner_id AS "partnerId", name, status, ${isoTimestamp('created_at')} AS "createdAt", ${isoTimestamp('updated_at')} AS "updatedAt"
     FROM organizations ORDER BY name, id`,
);

/** An organization of the list, its timestamps already in the API's ISO form. */
export interface OrganizationListRow {
  id: string;
  partnerId: string;
  name: string;
  status: OrganizationStatus;
  createdAt: string;
  updatedAt: string;
}

/** Organizations as the transaction's row-level security lets it see them, through the request's transaction (DbService.repo). */
@Injectable()
export class OrganizationRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<OrganizationEntity>> {
    return this.db.repo(OrganizationEntity);
  }

  /**
   * The console's most frequent administrative read (a benchmarked hot path): one statement through
   * DbService, which rides with the transaction's opening, instead of an entity query, which costs a round
   * trip of its own to open the transaction and hydrates entities row by row. The rows have the
   * answer's shape: parsing 100 timestamps into Dates and formatting them back was a tenth of the
   * route's CPU.
   */
  list(): Promise<OrganizationListRow[]> {
    return this.db.rows<OrganizationListRow>(LIST);
  }

  async find(id: string): Promise<OrganizationEntity | null> {
    return (await this.repo()).findOneBy({ id });
  }

  /** The row as stored: the INSERT's RETURNING clause fills in the timestamps the database set. */
  async insert(o: { id: string; partnerId: string; name: string; status: OrganizationStatus }): Promise<OrganizationEntity> {
    const repo = await this.repo();
    const row = repo.create(o);
    await repo.insert(row);
    return row;
  }

  /** Absent fields keep their value; updated_at is set on every update. Null when the caller cannot see the organization. */
  async update(id: string, patch: { name?: string; status?: OrganizationStatus }): Promise<OrganizationEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, { name: patch.name, status: patch.status });
    return affected ? repo.findOneBy({ id }) : null;
  }
}
