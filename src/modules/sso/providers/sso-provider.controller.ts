import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import {
  CreateSsoProviderDto,
  ListSsoProvidersQueryDto,
  SetSsoProviderStatusDto,
  SsoPresetListDto,
  SsoProviderListDto,
  SsoProviderResponseDto,
  SsoProviderTestDto,
  UpdateSsoProviderDto,
} from './sso-provider.dto';
import { SsoSuccessDto } from '../sso.dto';
import { SsoConnectionTestService } from './sso-connection-test.service';
import { SsoProviderReadService } from './sso-provider-read.service';
import { SsoProviderWriteService } from './sso-provider-write.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

const WRITE = { permission: 'organizations:write', mfa: true } as const;

@ApiTags('sso')
@Controller('sso')
export class SsoProviderController {
  constructor(
    private readonly reads: SsoProviderReadService,
    private readonly writes: SsoProviderWriteService,
    private readonly connections: SsoConnectionTestService,
  ) {}

  /**
   * Lists the SSO presets: the common identity providers with their default settings.
   *
   * @remarks Any signed-in caller.
   */
  @Get('presets')
  @Auth()
  presets(): Promise<SsoPresetListDto> {
    return this.reads.presets();
  }

  /**
   * Lists the SSO providers of an organization, or with `scope=partner` those of the caller's partner.
   *
   * @remarks Any signed-in caller; a partner-scope session names the organization (`orgId`). Client secrets are
   * never returned (`hasClientSecret` tells whether one is set).
   */
  @Get('providers')
  @Auth()
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSsoProvidersQueryDto): Promise<SsoProviderListDto> {
    return this.reads.list(principal, query);
  }

  /**
   * Reads one SSO provider, without its client secret.
   *
   * @remarks Any signed-in caller. 404 for another tenant's provider.
   */
  @Get('providers/:id')
  @Auth()
  get(@UuidParam() id: string): Promise<SsoProviderResponseDto> {
    return this.reads.get(id);
  }

  /**
   * Creates an SSO provider (OIDC or SAML) for an organization or the partner; it starts inactive.
   *
   * @remarks Needs `organizations:write` and an MFA session (`ownerScope: partner` also a partner-scope session).
   * An OIDC `issuer` is discovered at once; a failed discovery still creates the provider. A SAML provider may be
   * filled from IdP metadata. 400 `invalid_default_role`, `invalid_endpoint`, `saml_metadata_invalid`; 403
   * `privilege_escalation` when the default role grants more than the caller holds.
   */
  @Post('providers')
  @Auth(WRITE)
  @NoRequestTransaction() // may run OIDC discovery: no transaction is held across the network
  @ApiErrors({ 400: ['invalid_default_role', 'invalid_endpoint', 'saml_metadata_invalid'], 403: ['privilege_escalation', 'partner_scope_required'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateSsoProviderDto): Promise<SsoProviderResponseDto> {
    return this.writes.create(principal, dto);
  }

  /**
   * Changes an SSO provider's settings.
   *
   * @remarks Needs `organizations:write` and an MFA session. Changing the OIDC issuer needs a successful discovery
   * (400 `discovery_failed`); changing the issuer, client id or SAML entity id ends the sessions the provider
   * signed in. 409 `provider_changed` after a concurrent change.
   */
  @Patch('providers/:id')
  @Auth(WRITE)
  @NoRequestTransaction() // may run OIDC discovery: no transaction is held across the network
  @ApiErrors({ 400: ['discovery_failed', 'invalid_default_role', 'invalid_endpoint', 'saml_metadata_invalid'], 403: ['privilege_escalation'], 409: ['provider_changed'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateSsoProviderDto): Promise<SsoProviderResponseDto> {
    return this.writes.update(principal, id, dto);
  }

  /**
   * Deletes an SSO provider with its identity links; the sessions it signed in end.
   *
   * @remarks Needs `organizations:write` and an MFA session.
   */
  @Delete('providers/:id')
  @Auth(WRITE)
  remove(@UuidParam() id: string): Promise<SsoSuccessDto> {
    return this.writes.remove(id);
  }

  /**
   * Sets a provider's status: `active` (used for sign-in), `inactive` or `testing`.
   *
   * @remarks Needs `organizations:write` and an MFA session. 400 `provider_incomplete` (with `missing`) when
   * activating a provider that cannot sign anyone in yet; deactivating one ends the sessions it signed in.
   */
  @Post('providers/:id/status')
  @HttpCode(200)
  @Auth(WRITE)
  @ApiErrors({ 400: ['provider_incomplete'] })
  setStatus(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: SetSsoProviderStatusDto): Promise<SsoProviderResponseDto> {
    return this.writes.setStatus(id, dto.status, principal);
  }

  /**
   * Tests a provider: checks that its identity provider answers.
   *
   * @remarks Needs `organizations:write` and an MFA session. Answers `reachable`, and for OIDC what discovery
   * returns now and whether the stored endpoints still match it. Audited.
   */
  @Post('providers/:id/test')
  @HttpCode(200)
  @Auth(WRITE)
  @NoRequestTransaction() // may run OIDC discovery: no transaction is held across the network
  test(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SsoProviderTestDto> {
    return this.connections.test(principal, id);
  }
}
