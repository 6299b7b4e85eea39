import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { Principal, requireOwnerWrite } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { isAcceptableBrowserUrl } from '../providers/provider-config.util';
import { SamlSpService, SAML_METADATA_PATH } from './saml-sp.service';
import { SamlSpKeysService } from './saml-sp-keys.service';
import { SamlSpKeysRepository } from './saml-sp-keys.repository';
import { SamlSpSettingsDto, UpdateSamlSpSettingsDto } from './saml.dto';
import { SamlErrors } from './saml.errors';

/**
 * The SAML service-provider settings of one provider, for its administrators, in the request's
 * transaction (row-level security decides which providers they see and may change): the IdP's
 * Single Logout URL, whether assertions must be encrypted, and the SP keys (rotation).
 */
@Injectable()
export class SamlSpSettingsService {
  constructor(
    private readonly repo: SamlSpKeysRepository,
    private readonly keys: SamlSpKeysService,
    private readonly sp: SamlSpService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(providerId: string): Promise<SamlSpSettingsDto> {
    await this.provider(providerId);
    return this.view(providerId);
  }

  async update(principal: Principal, providerId: string, dto: UpdateSamlSpSettingsDto): Promise<SamlSpSettingsDto> {
    const tenant = await this.writable(principal, providerId);
    const current = (await this.repo.settings(providerId)) ?? { idpSloUrl: null, requireEncryptedAssertions: false };
    const next = {
      idpSloUrl: dto.idpSloUrl === undefined ? current.idpSloUrl : dto.idpSloUrl,
      requireEncryptedAssertions: dto.requireEncryptedAssertions ?? current.requireEncryptedAssertions,
    };
    if (next.idpSloUrl !== null && !isAcceptableBrowserUrl(next.idpSloUrl, this.config.ssoAllowInsecureLoopbackIdp && !this.config.isProduction)) {
      throw SamlErrors.sloUrlUnacceptable();
    }
    await this.repo.saveSettings(tenant, next, principal.userId);
    await this.audit.record({
      action: 'sso.saml.sp_settings.update',
      orgId: tenant.orgId,
      partnerId: tenant.partnerId,
      resourceType: 'sso_provider',
      resourceId: providerId,
      details: { idpSloUrl: next.idpSloUrl, requireEncryptedAssertions: next.requireEncryptedAssertions },
    });
    return this.view(providerId);
  }

  async rotate(principal: Principal, providerId: string): Promise<SamlSpSettingsDto> {
    const tenant = await this.writable(principal, providerId);
    await this.keys.rotate(tenant);
    await this.audit.record({ action: 'sso.saml.sp_key.rotate', orgId: tenant.orgId, partnerId: tenant.partnerId, resourceType: 'sso_provider', resourceId: providerId });
    return this.view(providerId);
  }

  private async provider(providerId: string) {
    const provider = await this.repo.samlProvider(providerId);
    if (!provider) throw SamlErrors.providerNotFound();
    return provider;
  }

  private async writable(principal: Principal, providerId: string) {
    const provider = await this.provider(providerId);
    const owner = { orgId: provider.org_id, partnerId: provider.partner_id };
    requireOwnerWrite(principal, owner);
    return { ...owner, providerId };
  }

  private async view(providerId: string): Promise<SamlSpSettingsDto> {
    const settings = await this.repo.settings(providerId);
    const keys = await this.keys.listed(providerId);
    return {
      providerId,
      idpSloUrl: settings?.idpSloUrl ?? null,
      requireEncryptedAssertions: settings?.requireEncryptedAssertions ?? false,
      metadataUrl: `${this.config.publicUrl}${SAML_METADATA_PATH}/${providerId}`,
      singleLogoutUrl: this.sp.sloUrl(providerId),
      keys: keys.map((k) => ({ certificate: k.certificate, createdAt: k.createdAt.toISOString(), retiresAt: k.retiresAt?.toISOString() ?? null })),
    };
  }
}
