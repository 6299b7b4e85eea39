import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

export interface SiteSummary {
  id: string;
  org_id: string;
  name: string;
  timezone: string;
}

/** Sites written by bulk callers (the importer), through SiteService, in the caller's transaction. */
@Injectable()
export class SiteBatchRepository {
  constructor(private readonly db: DbService) {}

  ofOrgs(orgIds: string[]): Promise<SiteSummary[]> {
    return this.db.rows(`SELECT id, org_id, name, timezone FROM sites WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  async insert(s: { id: string; orgId: string; name: string; timezone: string }): Promise<void> {
    await this.db.exec(`INSERT INTO sites (id, org_id, name, timezone) VALUES ($1, $2, $3, $4)`, [s.id, s.orgId, s.name, s.timezone]);
  }

  async update(id: string, name: string, timezone: string): Promise<void> {
    await this.db.exec(`UPDATE sites SET name = $2, timezone = $3, updated_at = now() WHERE id = $1`, [id, name, timezone]);
  }
}
