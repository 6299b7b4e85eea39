import { Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { DbService } from '../../infra/database/db.service';
import { GroupRoleMappingEntity } from './group-role-mapping.entity';

export interface ScimConnectionRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  name: string;
  token_prefix: string;
  default_role_id: string | null;
  acting_user_id: string | null;
  created_by: string | null;
  created_at: Date;
  rotated_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export interface RoleRow {
  id: string;
  scope: 'organization' | 'partner';
  org_id: string | null;
  partner_id: string | null;
  permissions: string[];
}

export interface MappingOwner {
  orgId: string | null;
  partnerId: string | null;
  providerId?: string;
  connectionId?: string;
}

const COLUMNS = `id, org_id, partner_id, name, token_prefix, default_role_id, acting_user_id, created_by, created_at, rotated_at, revoked_at, last_used_at`;

/**
 * SCIM connections and group mappings, always through the request's transaction (row-level
 * security). Mappings are entities (DbService.repo); connections stay SQL (the token lookup that
 * resolves a SCIM caller is principal resolution, ScimConnectionLookupRepository).
 */
@Injectable()
export class ScimConnectionRepository {
  constructor(private readonly db: DbService) {}

  insert(c: { orgId: string | null; partnerId: string | null; name: string; tokenPrefix: string; tokenHash: string; defaultRoleId: string | null; userId: string }): Promise<ScimConnectionRow | null> {
    return this.db.one(
      `INSERT INTO scim_connections (org_id, partner_id, name, token_prefix, token_hash, default_role_id, acting_user_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ${COLUMNS}`,
      [c.orgId, c.partnerId, c.name, c.tokenPrefix, c.tokenHash, c.defaultRoleId, c.userId],
    );
  }

  byId(id: string, opts: { forUpdate?: boolean } = {}): Promise<ScimConnectionRow | null> {
    return this.db.one(`SELECT ${COLUMNS} FROM scim_connections WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  }

  list(filter: { orgId?: string; partnerId?: string }): Promise<ScimConnectionRow[]> {
    return filter.orgId
      ? this.db.rows(`SELECT ${COLUMNS} FROM scim_connections WHERE org_id = $1 ORDER BY created_at, id`, [filter.orgId])
      : this.db.rows(`SELECT ${COLUMNS} FROM scim_connections WHERE partner_id = $1 AND org_id IS NULL ORDER BY created_at, id`, [filter.partnerId]);
  }

  rotate(id: string, tokenPrefix: string, tokenHash: string, userId: string): Promise<ScimConnectionRow | null> {
    return this.db.one(
      `UPDATE scim_connections SET token_prefix = $2, token_hash = $3, acting_user_id = $4, rotated_at = now()
        WHERE id = $1 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
      [id, tokenPrefix, tokenHash, userId],
    );
  }

  revoke(id: string): Promise<ScimConnectionRow | null> {
    return this.db.one(
      `UPDATE scim_connections SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
  }

  role(id: string): Promise<RoleRow | null> {
    return this.db.one(`SELECT id, scope, org_id, partner_id, permissions FROM roles WHERE id = $1`, [id]);
  }

  organizationVisible(orgId: string): Promise<boolean> {
    return this.db.one(`SELECT 1 FROM organizations WHERE id = $1`, [orgId]).then((r) => r !== null);
  }

  sitesOf(orgId: string, siteIds: string[]): Promise<string[]> {
    return this.db.rows<{ id: string }>(`SELECT id FROM sites WHERE org_id = $1 AND id = ANY($2::uuid[])`, [orgId, siteIds]).then((r) => r.map((x) => x.id));
  }

  provider(id: string): Promise<{ id: string; org_id: string | null; partner_id: string | null } | null> {
    return this.db.one(`SELECT id, org_id, partner_id FROM sso_providers WHERE id = $1`, [id]);
  }

  private mappingRepo(): Promise<Repository<GroupRoleMappingEntity>> {
    return this.db.repo(GroupRoleMappingEntity);
  }

  /** The provider's or the connection's mappings, in list order. */
  async mappings(owner: MappingOwner): Promise<GroupRoleMappingEntity[]> {
    const where = owner.providerId ? { providerId: owner.providerId } : { connectionId: owner.connectionId };
    return (await this.mappingRepo()).find({ where, order: { position: 'ASC' } });
  }

  /** Replaces the list: deletes the owner's mappings, then inserts `rows` in one statement, positions from 0. */
  async replaceMappings(owner: MappingOwner, rows: { group: string; roleId: string; siteIds: string[] | null }[], setBy: string): Promise<void> {
    const repo = await this.mappingRepo();
    await repo.delete(owner.providerId ? { providerId: owner.providerId } : { connectionId: owner.connectionId });
    if (rows.length === 0) return;
    await repo.insert(
      rows.map((r, position) =>
        repo.create({
          orgId: owner.orgId,
          partnerId: owner.orgId ? null : owner.partnerId,
          providerId: owner.providerId ?? null,
          connectionId: owner.connectionId ?? null,
          position,
          idpGroup: r.group,
          roleId: r.roleId,
          siteIds: r.siteIds,
          setBy,
        }),
      ),
    );
  }
}
