import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { GroupRoleApplier } from './group-role.applier';
import { ScimContextService } from './scim-context.service';
import { ScimError } from './scim-error';
import { scimFilterToSql } from './scim-filter';
import { ScimGroupRepository, type ScimGroupRow } from './scim-group.repository';
import { memberFilterValue, readPatch } from './scim-patch.util';
import { GROUP_SCHEMA, int, LIST_SCHEMA, ListQuery, MAX_PAGE, projection, text, UUID } from './scim-resource.util';
import { ConnectionScope, ScimUserRepository } from './scim-user.repository';
import { READ_ONLY, requireVersion, versioned } from './scim-version.util';

/**
 * The Groups of one SCIM connection (RFC 7643, 7644) and their members, who are people of the
 * connection. A change of membership or of a group's name re-applies the connection's
 * group-to-role mappings to the people it touches (in system context: the applier re-checks the
 * administrator who saved each mapping).
 */
@Injectable()
export class ScimGroupsService {
  constructor(
    private readonly groups: ScimGroupRepository,
    private readonly users: ScimUserRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly applier: GroupRoleApplier,
    private readonly context: ScimContextService,
  ) {}

  private async groupRow(scope: ConnectionScope, id: string): Promise<ScimGroupRow | null> {
    if (!UUID.test(id)) return null;
    return this.groups.find(scope.connectionId, id);
  }

  private async toGroup(g: ScimGroupRow, withMembers = true): Promise<Record<string, unknown>> {
    const members = withMembers ? await this.groups.members(g.id) : [];
    return versioned({
      schemas: [GROUP_SCHEMA],
      id: g.id,
      ...(g.external_id !== null ? { externalId: g.external_id } : {}),
      displayName: g.display_name,
      ...(withMembers ? { members: members.map((m) => ({ value: m.user_id, display: m.email, $ref: this.context.location('Users', m.user_id) })) } : {}),
      meta: { resourceType: 'Group', created: g.created_at.toISOString(), lastModified: g.updated_at.toISOString(), location: this.context.location('Groups', g.id) },
    });
  }

  async listGroups(p: Principal, q: ListQuery): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    if (q.filter !== undefined && typeof q.filter !== 'string') throw ScimError.badRequest('invalidFilter', 'filter must be a single string');
    const filter = q.filter
      ? scimFilterToSql(q.filter, { displayname: { sql: 'display_name', kind: 'string', caseExact: false }, externalid: { sql: 'external_id', kind: 'string', caseExact: true }, id: { sql: 'id::text', kind: 'string', caseExact: true } }, {}, 2)
      : null;
    const startIndex = int(q.startIndex, 'startIndex', 1, 1);
    const count = Math.min(int(q.count, 'count', 0, MAX_PAGE), MAX_PAGE);
    const rows = await this.groups.page(scope.connectionId, filter, startIndex - 1, count);
    const excluded = typeof q.excludedAttributes === 'string' && /(^|,)\s*members\s*(,|$)/i.test(q.excludedAttributes);
    const shape = projection(q);
    const resources = [];
    for (const r of rows) resources.push(shape(await this.toGroup(r, !excluded)));
    let total = rows.length ? Number(rows[0].total) : 0;
    if (!rows.length && (startIndex > 1 || count === 0)) {
      total = await this.groups.count(scope.connectionId, filter);
    }
    return { schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: rows.length, Resources: resources };
  }

  async getGroup(p: Principal, id: string, q: ListQuery): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    const g = await this.groupRow(scope, id);
    if (!g) throw ScimError.notFound('Group not found');
    return projection(q)(await this.toGroup(g));
  }

  async createGroup(p: Principal, body: unknown): Promise<Record<string, unknown>> {
    const scope = this.context.scopeOf(p);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw ScimError.badRequest('invalidSyntax', 'The body must be a Group object');
    const b = body as Record<string, unknown>;
    if (!Array.isArray(b.schemas) || !b.schemas.includes(GROUP_SCHEMA)) throw ScimError.badRequest('invalidSyntax', `schemas must include ${GROUP_SCHEMA}`);
    const displayName = text(b.displayName, 'displayName');
    if (!displayName) throw ScimError.badRequest('invalidValue', 'displayName is required');
    if (await this.groups.nameTaken(scope.connectionId, displayName)) throw ScimError.conflict('A group with this displayName already exists');
    const g = await this.groups.insert(scope, displayName, b.externalId === undefined || b.externalId === null ? null : text(b.externalId, 'externalId'));
    const members = Array.isArray(b.members) ? b.members.map((m) => this.memberId(m)) : [];
    await this.changeMembers(p, scope, g!.id, members, []);
    return this.toGroup((await this.groupRow(scope, g!.id))!);
  }

  /**
   * RFC 7644 §3.5.2: answered 204 without a body (what Entra ID advises for large membership
   * changes), or, when the request names `attributes` or `excludedAttributes`, 200 with the group
   * so projected.
   */
  async patchGroup(p: Principal, id: string, body: unknown, q: ListQuery = {}, ifMatch?: string): Promise<Record<string, unknown> | null> {
    const scope = this.context.scopeOf(p);
    const g = await this.groupRow(scope, id);
    if (!g) throw ScimError.notFound('Group not found');
    requireVersion(await this.toGroup(g, false), ifMatch);
    const add: string[] = [];
    const remove: string[] = [];
    let rename: string | null = null;
    let replaceMembers: string[] | null = null;
    for (const op of readPatch(body)) {
      const path = op.path?.trim() ?? null;
      const lower = path?.toLowerCase() ?? null;
      const fromPath = path ? memberFilterValue(path) : null;
      if (lower !== null && READ_ONLY.test(lower.replace(/^urn:ietf:params:scim:schemas:core:2\.0:group:/, ''))) {
        throw ScimError.badRequest('mutability', `${path!.slice(0, 40)} is read-only`);
      } else if (fromPath !== null) {
        if (op.op !== 'remove') throw ScimError.badRequest('invalidPath', 'A filtered members path can only be removed');
        remove.push(fromPath);
      } else if (lower === 'members') {
        const values = op.value === undefined ? null : (Array.isArray(op.value) ? op.value : [op.value]).map((m) => this.memberId(m));
        if (op.op === 'add') add.push(...values!);
        else if (op.op === 'remove') remove.push(...(values ?? (await this.groups.memberIds(id))));
        else replaceMembers = values ?? [];
      } else if (lower === 'displayname' || (lower === null && op.value && typeof op.value === 'object' && !Array.isArray(op.value))) {
        const fields = lower === null ? (op.value as Record<string, unknown>) : null;
        if (fields && fields.id !== undefined && fields.id !== id) throw ScimError.badRequest('mutability', 'id is read-only');
        if (fields && fields.meta !== undefined) throw ScimError.badRequest('mutability', 'meta is read-only');
        const value = lower === null ? fields!.displayName : op.value;
        if (lower === null && (op.value as Record<string, unknown>).members !== undefined) {
          replaceMembers = ((op.value as Record<string, unknown>).members as unknown[]).map((m) => this.memberId(m));
        }
        if (value !== undefined) rename = text(value, 'displayName');
      } else if (lower === 'externalid') {
        await this.groups.setExternalId(id, op.op === 'remove' ? null : text(op.value, 'externalId'));
      } else {
        throw ScimError.badRequest('invalidPath', `Unsupported path for a group`);
      }
    }
    if (rename !== null && rename !== g.display_name) {
      await this.groups.rename(id, rename);
    }
    if (replaceMembers !== null) {
      const current = new Set(await this.groups.memberIds(id));
      const wanted = new Set(replaceMembers);
      add.push(...replaceMembers.filter((m) => !current.has(m)));
      remove.push(...[...current].filter((m) => !wanted.has(m)));
    }
    const renamed = rename !== null && rename !== g.display_name;
    await this.changeMembers(p, scope, id, add, remove, renamed ? await this.groups.memberIds(id) : []);
    if (q.attributes === undefined && q.excludedAttributes === undefined) return null;
    const excluded = typeof q.excludedAttributes === 'string' && /(^|,)\s*members\s*(,|$)/i.test(q.excludedAttributes);
    return projection(q)(await this.toGroup((await this.groupRow(scope, id))!, !excluded));
  }

  async deleteGroup(p: Principal, id: string, ifMatch?: string): Promise<void> {
    const scope = this.context.scopeOf(p);
    const g = await this.groupRow(scope, id);
    if (!g) throw ScimError.notFound('Group not found');
    requireVersion(await this.toGroup(g, false), ifMatch);
    const members = await this.groups.memberIds(id);
    await this.groups.delete(id);
    await this.reapply(p, scope, members);
  }

  private memberId(m: unknown): string {
    const value = m && typeof m === 'object' ? (m as Record<string, unknown>).value : undefined;
    if (typeof value !== 'string' || value.length > 100) throw ScimError.badRequest('invalidValue', 'Each member needs a value (a user id)');
    return value;
  }

  /**
   * Members are users of the connection (an unknown id is 400 `invalidValue`); mapped roles are
   * re-applied to everyone touched. Set-based: a group push of a thousand members is a handful of
   * statements, not a few per member.
   */
  private async changeMembers(p: Principal, scope: ConnectionScope, groupId: string, add: string[], remove: string[], alsoReapply: string[] = []): Promise<void> {
    const touched = new Set<string>(alsoReapply);
    const adding = [...new Set(add)];
    if (adding.length) {
      const malformed = adding.find((userId) => !UUID.test(userId));
      const known = malformed ? new Set<string>() : new Set(await this.users.existing(scope, adding));
      const unknown = malformed ?? adding.find((userId) => !known.has(userId));
      if (unknown !== undefined) throw ScimError.badRequest('invalidValue', `Member ${JSON.stringify(unknown.slice(0, 40))} is not a user of this connection`);
      for (const userId of await this.groups.addMembers(scope, groupId, adding)) touched.add(userId);
    }
    const removable = [...new Set(remove)].filter((id) => UUID.test(id));
    if (removable.length) {
      for (const userId of await this.groups.removeMembers(groupId, removable)) touched.add(userId);
    }
    if (touched.size) await this.groups.touch(groupId);
    await this.reapply(p, scope, [...touched]);
  }

  private async reapply(p: Principal, scope: ConnectionScope, userIds: string[]): Promise<void> {
    if (!userIds.length || !(await this.groups.hasMappings(scope.connectionId))) return;
    const defaultRoleId = await this.groups.defaultRoleId(scope.connectionId);
    for (const userId of userIds) {
      const groups = await this.groups.groupNamesOf(scope.connectionId, userId);
      const applied = await this.tx.withSystemContext('group-to-role mappings re-check the administrator who saved them', () =>
        this.applier.apply({ orgId: scope.orgId, partnerId: scope.partnerId, connectionId: scope.connectionId, defaultRoleId, actorId: p.userId }, userId, groups),
      );
      if (applied.outcome !== 'no_mappings' && applied.outcome !== 'unchanged') {
        await this.audit.record({ action: 'scim.user.role_mapped', orgId: scope.orgId, partnerId: scope.partnerId, resourceType: 'user', resourceId: userId, details: { connectionId: scope.connectionId, outcome: applied.outcome, roleId: applied.roleId ?? null } });
        this.context.forgetAfterCommit(userId);
      }
    }
  }
}
