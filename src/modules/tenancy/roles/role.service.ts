import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { PrincipalCache } from '../../../common/principal-cache';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg, targetOrg } from '../../../common/tenant-access.util';
import { TenancyErrors } from '../tenancy.errors';
import { normalizePermissions, notCovered } from '../../../common/permission-set.util';
import type { CreateRoleDto, ListRolesQueryDto, RoleDto, RoleListDto, RoleResponseDto, UpdateRoleDto } from './role.dto';
import type { RoleEntity } from './role.entity';
import { RoleRepository } from './role.repository';

export function toRoleDto(r: RoleEntity): RoleDto {
  return {
    id: r.id,
    scope: r.scope,
    orgId: r.orgId,
    partnerId: r.partnerId,
    name: r.name,
    permissions: r.permissions,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** Refuses when `permissions` reach beyond what the caller holds. */
export function requireGrantable(principal: Principal, permissions: readonly string[]): void {
  const missing = notCovered(principal.permissions, permissions);
  if (missing.length) throw TenancyErrors.privilegeEscalation(missing);
}

const ownerOf = (r: RoleEntity) => (r.orgId ? { orgId: r.orgId } : { partnerId: r.partnerId });

/**
 * Roles owned by one organization or by the caller's partner. Nobody creates, edits, deletes or
 * grants a role holding permissions they do not hold themselves.
 */
@Injectable()
export class RoleService {
  constructor(
    private readonly repo: RoleRepository,
    private readonly audit: AuditService,
    private readonly principals: PrincipalCache,
  ) {}

  async list(principal: Principal, q: ListRolesQueryDto): Promise<RoleListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    return { success: true, roles: (await this.repo.list(q)).map(toRoleDto) };
  }

  async get(id: string): Promise<RoleResponseDto> {
    const row = await this.repo.find(id);
    if (!row) throw TenancyErrors.roleNotFound();
    return { success: true, role: toRoleDto(row) };
  }

  async create(principal: Principal, dto: CreateRoleDto): Promise<RoleResponseDto> {
    const scope = dto.scope ?? 'organization';
    let owner: { orgId: string | null; partnerId: string | null };
    if (scope === 'partner') {
      if (principal.scope !== 'partner' || !principal.partnerId) throw TenancyErrors.partnerScopeRequired('Creating a partner role');
      if (dto.orgId) throw TenancyErrors.invalidField('orgId', 'orgId must be absent for a partner role');
      owner = { orgId: null, partnerId: principal.partnerId };
    } else {
      owner = { orgId: targetOrg(principal, dto.orgId), partnerId: null };
    }
    requireGrantable(principal, dto.permissions);
    const permissions = normalizePermissions(dto.permissions);
    const row = await mapViolations(() => this.repo.insert({ scope, ...owner, name: dto.name, permissions }), {
      unique: () => TenancyErrors.nameTaken('role'),
    });
    await this.audit.record({ action: 'role.create', ...ownerOf(row), resourceType: 'role', resourceId: row.id, details: { name: dto.name, scope, permissions } });
    return { success: true, role: toRoleDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdateRoleDto): Promise<RoleResponseDto> {
    const current = await this.manageable(principal, id);
    if (dto.permissions) requireGrantable(principal, dto.permissions);
    const permissions = dto.permissions && normalizePermissions(dto.permissions);
    const row = await mapViolations(() => this.repo.update(id, { name: dto.name, permissions }), { unique: () => TenancyErrors.nameTaken('role') });
    // Sessions and keys of everyone holding the role carry its old permissions on this instance.
    if (permissions) this.principals.forgetAll();
    await this.audit.record({
      action: 'role.update',
      ...ownerOf(current),
      resourceType: 'role',
      resourceId: id,
      details: { changed: Object.keys(dto), ...(permissions ? { before: current.permissions, after: permissions } : {}) },
    });
    return { success: true, role: toRoleDto(row!) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.manageable(principal, id);
    // Memberships (and SSO default roles) reference roles without cascade: an assigned role stays.
    await mapViolations(() => this.repo.delete(id), { foreign_key: TenancyErrors.roleInUse });
    await this.audit.record({ action: 'role.delete', ...ownerOf(current), resourceType: 'role', resourceId: id, details: { name: current.name } });
    return { success: true };
  }

  /** A role more powerful than the caller is out of their hands, even to weaken or remove it. */
  private async manageable(principal: Principal, id: string): Promise<RoleEntity> {
    const row = await this.repo.find(id);
    if (!row) throw TenancyErrors.roleNotFound();
    requireGrantable(principal, row.permissions);
    return row;
  }

  /** A partner role for a caller with no principal yet (the bootstrap-admin command); the new role's id. */
  async createForPartner(partnerId: string, name: string, permissions: string[]): Promise<string> {
    return (await this.repo.insert({ scope: 'partner', orgId: null, partnerId, name, permissions })).id;
  }
}
