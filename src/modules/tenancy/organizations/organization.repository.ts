import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface OrganizationRow {
  id: string;
  partner_id: string;
  name: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

@Injectable()
export class OrganizationRepository {
  constructor(private readonly db: Db) {}

  list(): Promise<OrganizationRow[]> {
    return this.db.rows<OrganizationRow>(`SELECT * FROM organizations ORDER BY name, id`);
  }

  find(id: string): Promise<OrganizationRow | null> {
    return this.db.one<OrganizationRow>(`SELECT * FROM organizations WHERE id = $1`, [id]);
  }

  insert(o: { id: string; partnerId: string; name: string; status: string }): Promise<OrganizationRow | null> {
    return this.db.one<OrganizationRow>(
      `INSERT INTO organizations (id, partner_id, name, status) VALUES ($1, $2, $3, $4) RETURNING *`,
      [o.id, o.partnerId, o.name, o.status],
    );
  }

  update(id: string, patch: { name?: string; status?: string }): Promise<OrganizationRow | null> {
    return this.db.one<OrganizationRow>(
      `UPDATE organizations SET name = coalesce($2, name), status = coalesce($3, status), updated_at = now() WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.status ?? null],
    );
  }
}
