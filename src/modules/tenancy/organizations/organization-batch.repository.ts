import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

/** Organizations written by bulk callers (the importer), through OrganizationService, in the caller's transaction. */
@Injectable()
export class OrganizationBatchRepository {
  constructor(private readonly db: DbService) {}

  ofPartner(partnerId: string): Promise<{ id: string; name: string }[]> {
    return this.db.rows(`SELECT id, name FROM organizations WHERE partner_id = $1`, [partnerId]);
  }

  async insert(id: string, partnerId: string, name: string): Promise<void> {
    await this.db.exec(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, $3)`, [id, partnerId, name]);
  }

  async rename(id: string, name: string): Promise<void> {
    await this.db.exec(`UPDATE organizations SET name = $2, updated_at = now() WHERE id = $1`, [id, name]);
  }
}
