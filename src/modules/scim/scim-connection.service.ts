import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { randomToken, tokenHash } from '../../infra/crypto/secret-box.service';
import { Principal, requireOwnerWrite } from '../../common/principal';

import { AuditService } from '../audit/audit.service';
import { PrincipalResolverService } from '../auth/principal-resolver.service';
import { notCovered } from '../../common/permission-set.util';
import {
  CreateScimConnectionDto,
  GroupRoleMappingListDto,
  ListScimConnectionsQueryDto,
  ScimConnectionCreatedDto,
  ScimConnectionDto,
  ScimConnectionListDto,
  ScimConnectionResponseDto,
  SetGroupRoleMappingsDto,
} from './scim-connection.dto';
import { MappingOwner, ScimConnectionRepository, ScimConnectionRow } from './scim-connection.repository';
import { ScimAdminErrors } from './scim.errors';

const TOKEN_PREFIX = 'scim_';

/**
 * SCIM connections (one bearer credential per organization or partner) and the group-to-role
 * mappings of connections and SSO providers. Only a signed-in person configures them: the token
 * acts with that person's authority, so every role it can hand out must be one they may grant.
 */
@Injectable()
export class ScimConnectionService {
  constructor(
    private readonly repo: ScimConnectionRepository,
    private readonly audit: AuditService,
    private readonly resolver: PrincipalResolverService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Principal, dto: CreateScimConnectionDto): Promise<ScimConnectionCreatedDto> {
    const userId = this.person(principal);
    const owner = await this.ownerFor(principal, dto);
    if (dto.defaultRoleId) {
      if (!owner.orgId) throw ScimAdminErrors.invalidRole('defaultRoleId');
      await this.requireGrantable(principal, owner, dto.defaultRoleId, 'defaultRoleId');
    }
    const token = `${TOKEN_PREFIX}${randomToken(32)}`;
    const row = await this.repo.insert({ ...owner, name: dto.name, tokenPrefix: token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + 8), tokenHash: tokenHash(token), defaultRoleId: dto.defaultRoleId ?? null, userId });
    if (!row) throw ScimAdminErrors.notFound();
    await this.audit.record({ action: 'scim.connection.create', ...owner, resourceType: 'scim_connection', resourceId: row.id, details: { name: row.name, defaultRoleId: row.default_role_id } });
    return { success: true, connection: this.toDto(row), token };
  }

  async list(principal: Principal, query: ListScimConnectionsQueryDto): Promise<ScimConnectionListDto> {
    if (query.scope === 'partner') {
      if (query.orgId) throw ScimAdminErrors.scopeConflict();
      if (principal.scope !== 'partner' || !principal.partnerId) throw ScimAdminErrors.partnerScopeRequired();
      return { success: true, connections: (await this.repo.list({ partnerId: principal.partnerId })).map((r) => this.toDto(r)) };
    }
    const orgId = await this.organizationOf(principal, query.orgId);
    return { success: true, connections: (await this.repo.list({ orgId })).map((r) => this.toDto(r)) };
  }

  async get(id: string): Promise<ScimConnectionResponseDto> {
    const row = await this.repo.byId(id);
    if (!row) throw ScimAdminErrors.notFound();
    return { success: true, connection: this.toDto(row) };
  }

  /** A new token; the old one stops at once. The rotating administrator becomes the one the token acts for. */
  async rotate(principal: Principal, id: string): Promise<ScimConnectionCreatedDto> {
    const userId = this.person(principal);
    const current = await this.repo.byId(id, { forUpdate: true });
    if (!current) throw ScimAdminErrors.notFound();
    requireOwnerWrite(principal, { orgId: current.org_id, partnerId: current.partner_id });
    if (current.revoked_at) throw ScimAdminErrors.revoked();
    if (current.default_role_id) await this.requireGrantable(principal, { orgId: current.org_id, partnerId: current.partner_id }, current.default_role_id, 'defaultRoleId');
    const token = `${TOKEN_PREFIX}${randomToken(32)}`;
    const row = await this.repo.rotate(id, token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + 8), tokenHash(token), userId);
    if (!row) throw ScimAdminErrors.revoked();
    await this.audit.record({ action: 'scim.connection.rotate', orgId: row.org_id, partnerId: row.partner_id, resourceType: 'scim_connection', resourceId: id });
    this.resolver.forgetScimConnection(id);
    return { success: true, connection: this.toDto(row), token };
  }

  async revoke(principal: Principal, id: string): Promise<ScimConnectionResponseDto> {
    const current = await this.repo.byId(id, { forUpdate: true });
    if (!current) throw ScimAdminErrors.notFound();
    requireOwnerWrite(principal, { orgId: current.org_id, partnerId: current.partner_id });
    const row = await this.repo.revoke(id);
    if (!row) throw ScimAdminErrors.notFound();
    if (!current.revoked_at) {
      await this.audit.record({ action: 'scim.connection.revoke', orgId: row.org_id, partnerId: row.partner_id, resourceType: 'scim_connection', resourceId: id });
    }
    this.resolver.forgetScimConnection(id);
    return { success: true, connection: this.toDto(row) };
  }

  async connectionMappings(id: string): Promise<GroupRoleMappingListDto> {
    const row = await this.repo.byId(id);
    if (!row) throw ScimAdminErrors.notFound();
    return this.mappingList({ orgId: row.org_id, partnerId: row.partner_id, connectionId: id });
  }

  async setConnectionMappings(principal: Principal, id: string, dto: SetGroupRoleMappingsDto): Promise<GroupRoleMappingListDto> {
    const row = await this.repo.byId(id, { forUpdate: true });
    if (!row) throw ScimAdminErrors.notFound();
    return this.setMappings(principal, { orgId: row.org_id, partnerId: row.partner_id, connectionId: id }, dto);
  }

  async providerMappings(id: string): Promise<GroupRoleMappingListDto> {
    const provider = await this.repo.provider(id);
    if (!provider) throw ScimAdminErrors.providerNotFound();
    return this.mappingList({ orgId: provider.org_id, partnerId: provider.partner_id, providerId: id });
  }

  async setProviderMappings(principal: Principal, id: string, dto: SetGroupRoleMappingsDto): Promise<GroupRoleMappingListDto> {
    const provider = await this.repo.provider(id);
    if (!provider) throw ScimAdminErrors.providerNotFound();
    return this.setMappings(principal, { orgId: provider.org_id, partnerId: provider.partner_id, providerId: id }, dto);
  }

  private async setMappings(principal: Principal, owner: MappingOwner, dto: SetGroupRoleMappingsDto): Promise<GroupRoleMappingListDto> {
    const userId = this.person(principal);
    requireOwnerWrite(principal, owner);
    const rows: { group: string; roleId: string; siteIds: string[] | null }[] = [];
    for (const [i, m] of dto.mappings.entries()) {
      await this.requireGrantable(principal, owner, m.roleId, `mappings[${i}].roleId`);
      let siteIds: string[] | null = null;
      if (m.siteIds && m.siteIds.length > 0) {
        if (!owner.orgId) throw ScimAdminErrors.invalidSites();
        const found = await this.repo.sitesOf(owner.orgId, m.siteIds);
        if (found.length !== m.siteIds.length) throw ScimAdminErrors.invalidSites();
        siteIds = [...m.siteIds].sort();
      }
      rows.push({ group: m.group, roleId: m.roleId, siteIds });
    }
    await this.repo.replaceMappings(owner, rows, userId);
    await this.audit.record({
      action: 'scim.group_mappings.update',
      orgId: owner.orgId,
      partnerId: owner.partnerId,
      resourceType: owner.providerId ? 'sso_provider' : 'scim_connection',
      resourceId: owner.providerId ?? owner.connectionId,
      details: { mappings: rows.length },
    });
    return this.mappingList(owner);
  }

  private async mappingList(owner: MappingOwner): Promise<GroupRoleMappingListDto> {
    const rows = await this.repo.mappings(owner);
    return { success: true, mappings: rows.map((r) => ({ group: r.idpGroup, roleId: r.roleId, siteIds: r.siteIds, setBy: r.setBy })) };
  }

  /** The delegation rule of default roles: a role of the owner, of its scope, whose every permission the caller holds. */
  private async requireGrantable(principal: Principal, owner: { orgId: string | null; partnerId: string | null }, roleId: string, field: string): Promise<void> {
    const role = await this.repo.role(roleId);
    const ofOwner = role && (owner.orgId ? role.scope === 'organization' && role.org_id === owner.orgId : role.scope === 'partner' && role.partner_id === owner.partnerId);
    if (!role || !ofOwner) throw ScimAdminErrors.invalidRole(field);
    const missing = notCovered(principal.permissions, role.permissions);
    if (missing.length) throw ScimAdminErrors.privilegeEscalation(missing);
  }

  private person(principal: Principal): string {
    if (principal.kind !== 'user' || !principal.userId) throw ScimAdminErrors.personRequired();
    if (principal.allowedSiteIds !== null) throw ScimAdminErrors.siteRestricted();
    return principal.userId;
  }

  private async ownerFor(principal: Principal, dto: CreateScimConnectionDto): Promise<{ orgId: string | null; partnerId: string | null }> {
    if (dto.ownerScope === 'partner') {
      if (principal.scope !== 'partner' || !principal.partnerId) throw ScimAdminErrors.partnerScopeRequired();
      const owner = { orgId: null, partnerId: principal.partnerId };
      requireOwnerWrite(principal, owner);
      return owner;
    }
    return { orgId: await this.organizationOf(principal, dto.orgId), partnerId: null };
  }

  private async organizationOf(principal: Principal, orgId: string | undefined): Promise<string> {
    if (!orgId) {
      if (principal.scope === 'organization' && principal.orgId) return principal.orgId;
      throw ScimAdminErrors.orgIdRequired();
    }
    if (!principal.orgIds.includes(orgId) || !(await this.repo.organizationVisible(orgId))) throw ScimAdminErrors.organizationNotFound();
    return orgId;
  }

  private toDto(r: ScimConnectionRow): ScimConnectionDto {
    return {
      id: r.id,
      name: r.name,
      ownerScope: r.org_id ? 'organization' : 'partner',
      orgId: r.org_id,
      partnerId: r.partner_id,
      tokenPrefix: r.token_prefix,
      defaultRoleId: r.default_role_id,
      actingUserId: r.acting_user_id,
      createdBy: r.created_by,
      createdAt: r.created_at.toISOString(),
      rotatedAt: r.rotated_at?.toISOString() ?? null,
      revokedAt: r.revoked_at?.toISOString() ?? null,
      lastUsedAt: r.last_used_at?.toISOString() ?? null,
      baseUrl: `${this.config.publicUrl}/api/v1/scim/v2`,
    };
  }
}
