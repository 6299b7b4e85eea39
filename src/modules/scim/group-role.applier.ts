import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import { hasPermission } from '../../common/principal';
import { AccountProvisioningService } from '../tenancy/users/account-provisioning.service';
import { PersonAuthorityService } from '../tenancy/users/person-authority.service';

export interface MappingScope {
  orgId: string | null;
  partnerId: string | null;
  providerId?: string;
  connectionId?: string;
  /** The connection's default role (organization connections), the role a user falls back to when no group maps. */
  defaultRoleId?: string | null;
  /**
   * The person applying the mappings (a SCIM connection's administrator): they must have authority
   * over everything the user holds in the tenant, and be able to grant the mapped role themself,
   * besides the administrator who saved the mapping. Absent at SSO sign-in, where the provider's
   * configurer is checked against the resulting role instead.
   */
  actorId?: string | null;
}

interface MappingRow {
  idp_group: string;
  role_id: string;
  site_ids: string[] | null;
  set_by: string | null;
  permissions: string[];
}

export interface AppliedRole {
  /**
   * `unmatched`: mappings exist but none applies, and the caller asked to decide the fall-back
   * itself (`unmatched: 'report'`); nothing was changed.
   * `out_of_reach`: the acting person has no authority over everything the user holds; nothing was changed.
   */
  outcome: 'unchanged' | 'mapped' | 'default' | 'suspended' | 'no_mappings' | 'unmatched' | 'out_of_reach';
  roleId?: string;
  /** The group whose mapping gave the role. */
  group?: string;
  /** Groups the user is in whose mapping failed the re-check (its administrator may no longer grant the role). */
  skipped: string[];
}

export interface ApplyOptions {
  /** What to do when mappings exist and none applies: fall back (default role, else suspend), or report it and change nothing. */
  unmatched?: 'fall_back' | 'report';
}

/**
 * Applies group-to-role mappings to one membership: the first mapping (in list order) whose group
 * the user is in gives the role and its site restriction; with none, the role falls back to the
 * default role, or, without one, the membership is suspended (a removed group removes the role).
 * Each mapping is re-checked when applied: the administrator who saved it must still be active and
 * hold every permission of the role in the owner; a mapping that fails the check is skipped.
 * Runs in system context (it reads the saving administrator's grants).
 */
@Injectable()
export class GroupRoleApplier {
  constructor(
    private readonly db: DbService,
    private readonly accounts: AccountProvisioningService,
    private readonly authority: PersonAuthorityService,
  ) {}

  async apply(scope: MappingScope, userId: string, groups: readonly string[], options: ApplyOptions = {}): Promise<AppliedRole> {
    // SQL, not GroupRoleMappingEntity: read at every SSO sign-in and SCIM push, joined with the roles' permissions in one statement.
    const mappings = await this.db.rows<MappingRow>(
      `SELECT g.idp_group, g.role_id, g.site_ids, g.set_by, r.permissions
         FROM group_role_mappings g JOIN roles r ON r.id = g.role_id
        WHERE ${scope.providerId ? 'g.provider_id = $1' : 'g.connection_id = $1'} ORDER BY g.position`,
      [scope.providerId ?? scope.connectionId],
    );
    if (mappings.length === 0) return { outcome: 'no_mappings', skipped: [] };
    const tenant = scope.orgId ? { orgId: scope.orgId } : { partnerId: scope.partnerId as string };
    if (scope.actorId !== undefined && !(await this.authority.mayActOn(scope.actorId, userId, { kind: 'tenant', tenant }))) return { outcome: 'out_of_reach', skipped: [] };
    const wanted = new Set(groups.map((g) => g.toLowerCase()));
    const skipped: string[] = [];
    for (const m of mappings) {
      if (!wanted.has(m.idp_group.toLowerCase())) continue;
      const actorMayGrant = scope.actorId === undefined || (await this.authority.mayActOn(scope.actorId, userId, { kind: 'grant', tenant, permissions: m.permissions, siteIds: m.site_ids }));
      if (!actorMayGrant || !(await this.stillGrantable(scope, m.set_by, m.permissions))) {
        skipped.push(m.idp_group);
        continue;
      }
      const changed = await this.assignRole(scope, userId, m.role_id, m.site_ids);
      return { outcome: changed ? 'mapped' : 'unchanged', roleId: m.role_id, group: m.idp_group, skipped };
    }
    if (options.unmatched === 'report') return { outcome: 'unmatched', skipped };
    if (scope.orgId && scope.defaultRoleId) {
      const fallback = await this.db.one<{ permissions: string[] }>(`SELECT permissions FROM roles WHERE id = $1`, [scope.defaultRoleId]);
      if (scope.actorId !== undefined && !(fallback && (await this.authority.mayActOn(scope.actorId, userId, { kind: 'grant', tenant, permissions: fallback.permissions, siteIds: null })))) {
        return { outcome: 'out_of_reach', skipped };
      }
      const changed = await this.assignRole(scope, userId, scope.defaultRoleId, null);
      return { outcome: changed ? 'default' : 'unchanged', roleId: scope.defaultRoleId, skipped };
    }
    await this.accounts.suspend(scope, userId);
    return { outcome: 'suspended', skipped };
  }

  private async stillGrantable(scope: MappingScope, setBy: string | null, permissions: string[]): Promise<boolean> {
    if (!setBy) return false;
    const row = await this.db.one<{ permissions: string[] }>(
      scope.orgId
        ? `SELECT r.permissions FROM users u
             JOIN LATERAL (
               SELECT r.permissions FROM organization_memberships m JOIN roles r ON r.id = m.role_id
                WHERE m.user_id = u.id AND m.org_id = $2 AND m.suspended_at IS NULL
               UNION ALL
               SELECT r.permissions FROM partner_memberships pm JOIN roles r ON r.id = pm.role_id
                 JOIN organizations o ON o.id = $2 AND o.partner_id = pm.partner_id
                WHERE pm.user_id = u.id AND pm.suspended_at IS NULL
                  AND (pm.org_access = 'all' OR EXISTS (SELECT 1 FROM partner_membership_orgs po WHERE po.partner_id = pm.partner_id AND po.user_id = u.id AND po.org_id = $2))
             ) r ON true
            WHERE u.id = $1 AND u.status = 'active' LIMIT 1`
        : `SELECT r.permissions FROM users u JOIN partner_memberships pm ON pm.user_id = u.id AND pm.partner_id = $2 AND pm.suspended_at IS NULL AND pm.org_access = 'all'
             JOIN roles r ON r.id = pm.role_id WHERE u.id = $1 AND u.status = 'active'`,
      [setBy, scope.orgId ?? scope.partnerId],
    );
    return !!row && permissions.every((p) => hasPermission(row.permissions, p));
  }

  /**
   * Gives the membership this role and site restriction (null: every site); true when something
   * changed. Sites deleted since the mapping was saved are left out; a restriction whose every site
   * is gone restricts to none.
   */
  async assignRole(scope: MappingScope, userId: string, roleId: string, siteIds: string[] | null): Promise<boolean> {
    if (scope.orgId && siteIds?.length) {
      const existing = await this.db.rows<{ id: string }>(`SELECT id FROM sites WHERE org_id = $1 AND id = ANY ($2::uuid[])`, [scope.orgId, siteIds]);
      siteIds = existing.map((r) => r.id);
    }
    return this.accounts.assignRole(scope, userId, roleId, siteIds);
  }
}
