import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception';
import type { Principal } from '../../../common/principal';
import { SsoErrors } from '../sso.errors';
import { SSO_PRESETS } from './sso-preset.registry';
import type { ListSsoProvidersQueryDto, SsoPresetListDto, SsoProviderDto, SsoProviderListDto, SsoProviderResponseDto } from './sso-provider.dto';
import { SsoProviderRepository } from './sso-provider.repository';
import { SsoOwner, SsoProviderRecord } from './sso-provider.types';

export function toProviderDto(r: SsoProviderRecord): SsoProviderDto {
  return {
    id: r.id,
    ownerScope: r.orgId ? 'organization' : 'partner',
    orgId: r.orgId,
    partnerId: r.partnerId,
    name: r.name,
    type: r.type,
    status: r.status,
    preset: r.preset,
    issuer: r.issuer,
    clientId: r.clientId,
    hasClientSecret: r.clientSecretSealed !== null,
    authorizationUrl: r.authorizationUrl,
    tokenUrl: r.tokenUrl,
    userInfoUrl: r.userInfoUrl,
    jwksUrl: r.jwksUrl,
    scopes: r.scopes,
    entityId: r.entityId,
    ssoUrl: r.ssoUrl,
    certificate: r.certificate,
    nameIdFormat: r.nameIdFormat,
    forceAuthn: r.forceAuthn,
    attributeMapping: r.attributeMapping,
    autoProvision: r.autoProvision,
    defaultRoleId: r.defaultRoleId,
    allowedDomains: r.allowedDomains,
    enforceSSO: r.enforceSSO,
    trustsIdpMfa: r.trustsIdpMfa,
    generation: r.generation,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/**
 * Reading SSO providers (spec 4.1): the presets, an owner's providers and one provider, as the
 * API answers them (never a client secret, only whether one is set).
 */
@Injectable()
export class SsoProviderReadService {
  constructor(private readonly repo: SsoProviderRepository) {}

  async presets(): Promise<SsoPresetListDto> {
    return {
      success: true,
      presets: SSO_PRESETS.map((p) => ({
        id: p.id,
        name: p.name,
        type: p.type,
        parameters: p.parameters.map((param) => ({ ...param })),
        ...(p.issuer ? { issuer: p.issuer } : {}),
        ...(p.ssoUrl ? { ssoUrl: p.ssoUrl } : {}),
        ...(p.scopes ? { scopes: p.scopes } : {}),
        ...(p.nameIdFormat ? { nameIdFormat: p.nameIdFormat } : {}),
        attributeMapping: { ...p.attributeMapping },
      })),
    };
  }

  /** Runs in the request transaction. */
  async list(principal: Principal, query: ListSsoProvidersQueryDto): Promise<SsoProviderListDto> {
    const owner = this.listOwner(principal, query);
    if (owner.orgId && !(await this.repo.organizationVisible(owner.orgId))) throw SsoErrors.organizationNotFound();
    return { success: true, providers: (await this.repo.list(owner)).map(toProviderDto) };
  }

  /** Runs in the request transaction; another tenant's provider is invisible, hence 404. */
  async get(id: string): Promise<SsoProviderResponseDto> {
    const record = await this.repo.find(id);
    if (!record) throw SsoErrors.providerNotFound();
    return { success: true, provider: toProviderDto(record) };
  }

  private listOwner(principal: Principal, query: ListSsoProvidersQueryDto): SsoOwner {
    if (query.scope === 'partner') {
      if (principal.scope !== 'partner' || !principal.partnerId) throw SsoErrors.partnerScopeRequired('Listing partner providers');
      if (query.orgId) throw AppException.validation([{ field: 'orgId', message: 'orgId cannot be combined with scope=partner' }]);
      return { orgId: null, partnerId: principal.partnerId };
    }
    const orgId = query.orgId ?? (principal.scope === 'organization' ? principal.orgId : null);
    if (!orgId) throw SsoErrors.orgIdRequired();
    return { orgId, partnerId: null };
  }
}
