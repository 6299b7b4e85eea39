import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface SiteRow {
  id: string;
  org_id: string;
  name: string;
  timezone: string;
  created_at: Date;
  updated_at: Date;
}

@Injectable()
export class SiteRepository {
  constructor(private readonly db: Db) {}

  /** `siteIds` null: every site the transaction can see. */
  list(f: { orgId?: string; siteIds: readonly string[] | null }): Promise<SiteRow[]> {
    return this.db.rows<SiteRow>(
      `SELECT * FROM sites WHERE ($1::uuid IS NULL OR org_id = $1) AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[])) ORDER BY org_id, name, id`,
      [f.orgId ?? null, f.siteIds],
    );
  }

  find(id: string): Promise<SiteRow | null> {
    return this.db.one<SiteRow>(`SELECT * FROM sites WHERE id = $1`, [id]);
  }

  findMany(ids: readonly string[]): Promise<SiteRow[]> {
    return this.db.rows<SiteRow>(`SELECT * FROM sites WHERE id = ANY($1::uuid[])`, [ids]);
  }

  insert(s: { orgId: string; name: string; timezone: string }): Promise<SiteRow | null> {
    return this.db.one<SiteRow>(`INSERT INTO sites (org_id, name, timezone) VALUES ($1, $2, $3) RETURNING *`, [s.orgId, s.name, s.timezone]);
  }

  update(id: string, patch: { name?: string; timezone?: string }): Promise<SiteRow | null> {
    return this.db.one<SiteRow>(
      `UPDATE sites SET name = coalesce($2, name), timezone = coalesce($3, timezone), updated_at = now() WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.timezone ?? null],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM sites WHERE id = $1`, [id]);
  }
}
