import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import type { SqlFilter } from './scim-filter';
import type { ConnectionScope } from './scim-user.repository';

export interface ScimGroupRow {
  id: string;
  display_name: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * A connection's groups and their members, and what re-applying group-to-role mappings reads.
 * Built with fixed SQL text; a list filter contributes only its parameterised expression over the
 * group's columns.
 */
@Injectable()
export class ScimGroupRepository {
  constructor(private readonly db: DbService) {}

  /** A page of the connection's groups in creation order, each row with the total the filter matches. */
  page(connectionId: string, filter: SqlFilter | null, offset: number, limit: number): Promise<(ScimGroupRow & { total: string })[]> {
    const params = [connectionId, ...(filter?.params ?? [])];
    return this.db.rows<ScimGroupRow & { total: string }>(
      `SELECT *, count(*) OVER () AS total FROM scim_groups WHERE connection_id = $1 ${filter ? `AND ${filter.sql}` : ''} ORDER BY created_at, id OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
      [...params, offset, limit],
    );
  }

  /** How many of the connection's groups the filter matches (for a page that came back empty). */
  async count(connectionId: string, filter: SqlFilter | null): Promise<number> {
    const params = [connectionId, ...(filter?.params ?? [])];
    return Number((await this.db.one<{ c: string }>(`SELECT count(*) AS c FROM scim_groups WHERE connection_id = $1 ${filter ? `AND ${filter.sql}` : ''}`, params))?.c ?? 0);
  }

  find(connectionId: string, id: string): Promise<ScimGroupRow | null> {
    return this.db.one(`SELECT id, display_name, external_id, created_at, updated_at FROM scim_groups WHERE id = $1 AND connection_id = $2`, [id, connectionId]);
  }

  /** The group's members with their sign-in email, by email. */
  members(groupId: string): Promise<{ user_id: string; email: string }[]> {
    return this.db.rows<{ user_id: string; email: string }>(`SELECT m.user_id, u.email FROM scim_group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = $1 ORDER BY u.email`, [groupId]);
  }

  async memberIds(groupId: string): Promise<string[]> {
    return (await this.db.rows<{ user_id: string }>(`SELECT user_id FROM scim_group_members WHERE group_id = $1`, [groupId])).map((r) => r.user_id);
  }

  /** Another group of the connection has this displayName, whatever its case. */
  async nameTaken(connectionId: string, displayName: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM scim_groups WHERE connection_id = $1 AND lower(display_name) = lower($2)`, [connectionId, displayName])) !== null;
  }

  insert(scope: ConnectionScope, displayName: string, externalId: string | null): Promise<ScimGroupRow | null> {
    return this.db.one<ScimGroupRow>(
      `INSERT INTO scim_groups (connection_id, org_id, partner_id, display_name, external_id) VALUES ($1, $2, $3, $4, $5) RETURNING id, display_name, external_id, created_at, updated_at`,
      [scope.connectionId, scope.orgId, scope.orgId ? null : scope.partnerId, displayName, externalId],
    );
  }

  setExternalId(id: string, externalId: string | null): Promise<number> {
    return this.db.exec(`UPDATE scim_groups SET external_id = $2, updated_at = now() WHERE id = $1`, [id, externalId]);
  }

  rename(id: string, displayName: string): Promise<number> {
    return this.db.exec(`UPDATE scim_groups SET display_name = $2, updated_at = now() WHERE id = $1`, [id, displayName]);
  }

  /** Its members go with it. */
  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM scim_groups WHERE id = $1`, [id]);
  }

  /** Links the people to the connection where they are not yet, and adds them to the group; the ids newly added. */
  async addMembers(scope: ConnectionScope, groupId: string, userIds: string[]): Promise<string[]> {
    const owner = [scope.connectionId, scope.orgId, scope.orgId ? null : scope.partnerId, userIds];
    await this.db.exec(
      `INSERT INTO scim_users (connection_id, org_id, partner_id, user_id) SELECT $1, $2, $3, u FROM unnest($4::uuid[]) u ON CONFLICT (connection_id, user_id) DO NOTHING`,
      owner,
    );
    const added = await this.db.rows<{ user_id: string }>(
      `INSERT INTO scim_group_members (group_id, connection_id, org_id, partner_id, user_id) SELECT $5, $1, $2, $3, u FROM unnest($4::uuid[]) u
       ON CONFLICT DO NOTHING RETURNING user_id`,
      [...owner, groupId],
    );
    return added.map((r) => r.user_id);
  }

  /** The ids removed (those that were members). */
  async removeMembers(groupId: string, userIds: string[]): Promise<string[]> {
    const gone = await this.db.rows<{ user_id: string }>(`DELETE FROM scim_group_members WHERE group_id = $1 AND user_id = ANY($2::uuid[]) RETURNING user_id`, [groupId, userIds]);
    return gone.map((r) => r.user_id);
  }

  /** The person leaves every group of the connection (the connection deleted them). */
  removeFromAll(connectionId: string, userId: string): Promise<number> {
    return this.db.exec(`DELETE FROM scim_group_members WHERE connection_id = $1 AND user_id = $2`, [connectionId, userId]);
  }

  /** The group's membership changed: meta.lastModified says so (RFC 7643 §3.1). */
  touch(id: string): Promise<number> {
    return this.db.exec(`UPDATE scim_groups SET updated_at = now() WHERE id = $1`, [id]);
  }

  /** Whether any group-to-role mapping is saved on the connection (without one, group changes change no role). */
  async hasMappings(connectionId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM group_role_mappings WHERE connection_id = $1 LIMIT 1`, [connectionId])) !== null;
  }

  /** The connection's default role, the role a person falls back to when none of their groups maps. */
  async defaultRoleId(connectionId: string): Promise<string | null> {
    return (await this.db.one<{ default_role_id: string | null }>(`SELECT default_role_id FROM scim_connections WHERE id = $1`, [connectionId]))?.default_role_id ?? null;
  }

  /** The displayNames of the person's groups in the connection. */
  async groupNamesOf(connectionId: string, userId: string): Promise<string[]> {
    return (
      await this.db.rows<{ display_name: string }>(
        `SELECT g.display_name FROM scim_group_members m JOIN scim_groups g ON g.id = m.group_id WHERE m.connection_id = $1 AND m.user_id = $2`,
        [connectionId, userId],
      )
    ).map((g) => g.display_name);
  }
}
