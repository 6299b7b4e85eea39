import { Body, Controller, Delete, Get, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import { UuidParam } from '../../common/pipes/uuid.pipe';
import type { Principal } from '../../common/principal';
import {
  CreateScimConnectionDto,
  GroupRoleMappingListDto,
  ListScimConnectionsQueryDto,
  ScimConnectionCreatedDto,
  ScimConnectionListDto,
  ScimConnectionResponseDto,
  SetGroupRoleMappingsDto,
} from './scim-connection.dto';
import { ScimConnectionService } from './scim-connection.service';

@ApiTags('scim')
@Controller()
export class ScimConnectionController {
  constructor(private readonly connections: ScimConnectionService) {}

  /**
   * Lists the SCIM connections of an organization (`orgId`, inferred for organization sessions) or of the partner (`scope=partner`). Never the token.
   *
   * @remarks Needs `organizations:write`. Partner connections are listed only to callers who reach every organization of the partner.
   */
  @Get('scim/connections')
  @Auth({ permission: 'organizations:write' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListScimConnectionsQueryDto): Promise<ScimConnectionListDto> {
    return this.connections.list(principal, query);
  }

  /**
   * Creates a SCIM connection and returns its bearer token `scim_…` once.
   *
   * @remarks A signed-in person with MFA and `organizations:write`, not limited to sites; a partner connection (`ownerScope: partner`) needs a partner session with access to every organization. The token acts with the creator's authority, re-checked on every request. Errors: 400 `invalid_default_role`, 403 `privilege_escalation` (a default role granting more than the caller holds), 403 `site_access_denied`.
   */
  @Post('scim/connections')
  @Auth({ permission: 'organizations:write', mfa: true })
  @ApiErrors({ 400: ['invalid_default_role'], 403: ['privilege_escalation', 'site_access_denied'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateScimConnectionDto): Promise<ScimConnectionCreatedDto> {
    return this.connections.create(principal, dto);
  }

  /**
   * One SCIM connection.
   *
   * @remarks Needs `organizations:write`; another tenant's connection answers 404.
   */
  @Get('scim/connections/:id')
  @Auth({ permission: 'organizations:write' })
  get(@UuidParam() id: string): Promise<ScimConnectionResponseDto> {
    return this.connections.get(id);
  }

  /**
   * Replaces the connection's token: the old one stops at once, the new one is returned once and acts with the rotating administrator's authority.
   *
   * @remarks Needs `organizations:write` and MFA, from a signed-in person. Errors: 409 `scim_connection_revoked`, 403 `privilege_escalation` (the default role grants more than the caller holds).
   */
  @Post('scim/connections/:id/rotate')
  @Auth({ permission: 'organizations:write', mfa: true })
  @ApiErrors({ 403: ['privilege_escalation', 'site_access_denied'], 409: ['scim_connection_revoked'] })
  rotate(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ScimConnectionCreatedDto> {
    return this.connections.rotate(principal, id);
  }

  /**
   * Revokes the connection: its token stops at once; revoking again changes nothing.
   *
   * @remarks Needs `organizations:write` and MFA; an API key may revoke, as it may revoke API keys. Another tenant's connection answers 404.
   */
  @Delete('scim/connections/:id')
  @Auth({ permission: 'organizations:write', mfa: true })
  revoke(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ScimConnectionResponseDto> {
    return this.connections.revoke(principal, id);
  }

  /**
   * The connection's group-to-role mappings, in order (the first one matching a user's groups gives the role).
   *
   * @remarks Needs `organizations:write`; partner connections only for callers who reach every organization.
   */
  @Get('scim/connections/:id/group-mappings')
  @Auth({ permission: 'organizations:write' })
  connectionMappings(@UuidParam() id: string): Promise<GroupRoleMappingListDto> {
    return this.connections.connectionMappings(id);
  }

  /**
   * Replaces the connection's group-to-role mappings (IdP group → role, optional sites).
   *
   * @remarks Needs `organizations:write` and MFA, from a signed-in person who holds every permission of each role. Errors: 400 `invalid_default_role` (a role of another owner or scope), 403 `privilege_escalation`.
   */
  @Put('scim/connections/:id/group-mappings')
  @Auth({ permission: 'organizations:write', mfa: true })
  @ApiErrors({ 400: ['invalid_default_role'], 403: ['privilege_escalation', 'site_access_denied'] })
  setConnectionMappings(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: SetGroupRoleMappingsDto): Promise<GroupRoleMappingListDto> {
    return this.connections.setConnectionMappings(principal, id, dto);
  }

  /**
   * The SSO provider's group-to-role mappings, applied at every sign-in from the `groups` claim or attribute: the first mapping matching one of the person's groups gives the role and sites; none matching falls back to the default role.
   *
   * @remarks Needs `organizations:write`.
   */
  @Get('sso/providers/:id/group-mappings')
  @Auth({ permission: 'organizations:write' })
  providerMappings(@UuidParam() id: string): Promise<GroupRoleMappingListDto> {
    return this.connections.providerMappings(id);
  }

  /**
   * Replaces the SSO provider's group-to-role mappings.
   *
   * @remarks Needs `organizations:write` and MFA, from a signed-in person who holds every permission of each role. Errors: 400 `invalid_default_role`, 403 `privilege_escalation`.
   */
  @Put('sso/providers/:id/group-mappings')
  @Auth({ permission: 'organizations:write', mfa: true })
  @ApiErrors({ 400: ['invalid_default_role'], 403: ['privilege_escalation', 'site_access_denied'] })
  setProviderMappings(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: SetGroupRoleMappingsDto): Promise<GroupRoleMappingListDto> {
    return this.connections.setProviderMappings(principal, id, dto);
  }
}
