import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import type { RoleScope } from './role.dto';

export interface RoleRow {
  id: string;
  scope: RoleScope;
  org_id: string | null;
  partner_id: string | null;
  name: string;
  permissions: string[];
  created_at: Date;
  updated_at: Date;
}

@Injectable()
export class RoleRepository {
  constructor(private readonly db: Db) {}

  list(f: { orgId?: string; scope?: RoleScope }): Promise<RoleRow[]> {
    return this.db.rows<RoleRow>(
      `SELECT * FROM roles WHERE ($1::uuid IS NULL OR org_id = $1) AND ($2::text IS NULL OR scope = $2)
        ORDER BY scope DESC, org_id NULLS FIRST, lower(name), id`,
      [f.orgId ?? null, f.scope ?? null],
    );
  }

  find(id: string): Promise<RoleRow | null> {
    return this.db.one<RoleRow>(`SELECT * FROM roles WHERE id = $1`, [id]);
  }

  insert(r: { scope: RoleScope; orgId: string | null; partnerId: string | null; name: string; permissions: string[] }): Promise<RoleRow | null> {
    return this.db.one<RoleRow>(`INSERT INTO roles (scope, org_id, partner_id, name, permissions) VALUES ($1, $2, $3, $4, $5) RETURNING *`, [
      r.scope,
      r.orgId,
      r.partnerId,
      r.name,
      r.permissions,
    ]);
  }

  update(id: string, patch: { name?: string; permissions?: string[] }): Promise<RoleRow | null> {
    return this.db.one<RoleRow>(
      `UPDATE roles SET name = coalesce($2, name), permissions = coalesce($3, permissions), updated_at = now() WHERE id = $1 RETURNING *`,
      [id, patch.name ?? null, patch.permissions ?? null],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM roles WHERE id = $1`, [id]);
  }
}
