import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception';
import { hasPermission, Principal, requireOwnerWrite } from '../../../common/principal';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { callerVisible, DiscoveryError } from '../../../infra/net/net.errors';
import { DiscoveredOidcEndpoints } from '../../../infra/net/oidc-discovery.util';
import { ENDPOINT_FIELDS, type EndpointField } from '../discovery/oidc-endpoint-fields';
import { ProviderDiscoveryService } from '../discovery/provider-discovery.service';
import { IdpMetadataImportError, IdpMetadataImporterService } from '../saml/metadata/idp-metadata-importer.service';
import { SamlErrors } from '../saml/saml.errors';
import type { IdpMetadata } from '../saml/xml/saml-metadata.util';
import { SsoErrors } from '../sso.errors';
import {
  changedFields,
  FieldProblem,
  foreignFields,
  isAcceptableBrowserUrl,
  MAX_CERTIFICATE_LENGTH,
  normaliseAllowedDomains,
  normaliseCertificates,
  normaliseScopes,
} from './provider-config.util';
import { fillPreset, findPreset, PresetFill } from './sso-preset.registry';
import type { AttributeMappingDto, CreateSsoProviderDto, UpdateSsoProviderDto } from './sso-provider.dto';
import { ProviderPatch, SsoProviderRepository } from './sso-provider.repository';
import { AttributeMapping, clientSecretContext, DEFAULT_ATTRIBUTE_MAPPING, DEFAULT_OIDC_SCOPES, SsoOwner, SsoProviderConfig, SsoProviderRecord } from './sso-provider.types';

function plainMapping(dto: AttributeMappingDto): AttributeMapping {
  const mapping: AttributeMapping = { email: dto.email, name: dto.name };
  if (dto.firstName !== undefined) mapping.firstName = dto.firstName;
  if (dto.lastName !== undefined) mapping.lastName = dto.lastName;
  if (dto.groups !== undefined) mapping.groups = dto.groups;
  return mapping;
}

/**
 * Builds a provider's configuration from a create or update request: the owner, the preset and
 * field normalisation, the default role's check, the endpoints an OIDC discovery found, the fields
 * a SAML metadata import fills, and the check of administrator-typed endpoints. The metadata
 * import and the endpoint check make network calls, so callers run them outside any transaction;
 * the default role's check reads the role in the caller's transaction.
 */
@Injectable()
export class SsoProviderConfigBuilderService {
  private readonly logger = new Logger(SsoProviderConfigBuilderService.name);

  constructor(
    private readonly repo: SsoProviderRepository,
    private readonly box: SecretBoxService,
    private readonly discovery: ProviderDiscoveryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly idpMetadata: IdpMetadataImporterService,
  ) {}

  /**
   * What a patch really changes, as the columns to write and the API field names to audit.
   * A new secret always counts (ciphertexts cannot be compared); re-saving the same default
   * role counts when it moves the delegation to another administrator.
   */
  effectiveChanges(current: SsoProviderRecord, patch: ProviderPatch): { changed: string[]; effective: ProviderPatch } {
    const { clientSecretSealed, defaultRoleSetBy, ...config } = patch;
    const changed: string[] = changedFields<ProviderPatch>(current, config);
    const effective: ProviderPatch = Object.fromEntries(changed.map((field) => [field, config[field as keyof typeof config]]));
    if (clientSecretSealed !== undefined && (clientSecretSealed !== null || current.clientSecretSealed !== null)) {
      effective.clientSecretSealed = clientSecretSealed;
      changed.push('clientSecret');
    }
    if (defaultRoleSetBy !== undefined && (defaultRoleSetBy !== current.defaultRoleSetBy || changed.includes('defaultRoleId'))) {
      effective.defaultRoleSetBy = defaultRoleSetBy;
      effective.defaultRoleId = patch.defaultRoleId;
      if (!changed.includes('defaultRoleId')) changed.push('defaultRoleId');
    }
    return { changed, effective };
  }

  createOwner(principal: Principal, dto: CreateSsoProviderDto): SsoOwner {
    if (dto.ownerScope === 'partner') {
      if (principal.scope !== 'partner' || !principal.partnerId) throw SsoErrors.partnerScopeRequired('A partner provider');
      const owner = { orgId: null, partnerId: principal.partnerId };
      requireOwnerWrite(principal, owner);
      return owner;
    }
    const orgId = dto.orgId ?? (principal.scope === 'organization' ? principal.orgId : null);
    if (!orgId) throw SsoErrors.orgIdRequired();
    return { orgId, partnerId: null };
  }

  /**
   * Spec 1.2.4 and 1.6.5: the role belongs to the provider's owner, and the caller holds
   * every permission it grants, so nobody can hand out more through SSO than they have.
   */
  async checkDefaultRole(principal: Principal, owner: SsoOwner, roleId: string): Promise<void> {
    const role = await this.repo.role(roleId);
    if (!role) throw SsoErrors.invalidDefaultRole('The default role does not exist');
    if (owner.orgId && (role.scope !== 'organization' || role.orgId !== owner.orgId)) {
      throw SsoErrors.invalidDefaultRole("The default role must be an organization role of the provider's organization");
    }
    if (owner.partnerId && (role.scope !== 'partner' || role.partnerId !== owner.partnerId)) {
      throw SsoErrors.invalidDefaultRole("The default role of a partner provider must be a partner role of the caller's partner");
    }
    const beyond = role.permissions.filter((permission) => !hasPermission(principal.permissions, permission));
    if (beyond.length > 0) throw SsoErrors.privilegeEscalation(beyond);
  }

  buildCreateConfig(dto: CreateSsoProviderDto, owner: SsoOwner): SsoProviderConfig {
    const problems: FieldProblem[] = foreignFields(dto.type, dto);
    let fill: PresetFill | undefined;
    if (dto.preset != null) {
      const preset = findPreset(dto.preset);
      if (!preset) {
        problems.push({ field: 'preset', message: `Unknown preset ${dto.preset}` });
      } else if (preset.type !== dto.type) {
        problems.push({ field: 'preset', message: `${preset.id} is a ${preset.type} preset` });
      } else {
        const explicitUrl = dto.type === 'oidc' ? dto.issuer : dto.ssoUrl;
        const filled = fillPreset(preset, dto.presetParams ?? undefined, explicitUrl == null);
        if ('problems' in filled) problems.push(...filled.problems);
        else fill = filled.fill;
      }
    } else if (dto.presetParams != null) {
      problems.push({ field: 'presetParams', message: 'presetParams needs a preset' });
    }
    if (owner.partnerId && dto.autoProvision === true) {
      problems.push({ field: 'autoProvision', message: 'A partner provider never provisions users' });
    }
    const scopes = dto.type === 'oidc' ? this.normalised(problems, normaliseScopes(dto.scopes ?? fill?.scopes ?? DEFAULT_OIDC_SCOPES)) : null;
    const allowedDomains = dto.allowedDomains != null ? this.normalised(problems, normaliseAllowedDomains(dto.allowedDomains)) : null;
    const certificate = dto.type === 'saml' && dto.certificate != null ? this.normalised(problems, normaliseCertificates(dto.certificate)) : null;
    const ssoUrl = dto.ssoUrl ?? fill?.ssoUrl ?? null;
    this.checkSsoUrl(problems, dto.ssoUrl);
    if (problems.length > 0) throw AppException.validation(problems);

    return {
      name: dto.name,
      issuer: dto.issuer ?? fill?.issuer ?? null,
      clientId: dto.clientId ?? null,
      authorizationUrl: dto.authorizationUrl ?? null,
      tokenUrl: dto.tokenUrl ?? null,
      userInfoUrl: dto.userInfoUrl ?? null,
      jwksUrl: dto.jwksUrl ?? null,
      scopes,
      entityId: dto.entityId ?? null,
      ssoUrl,
      certificate,
      nameIdFormat: dto.nameIdFormat ?? fill?.nameIdFormat ?? null,
      forceAuthn: dto.forceAuthn ?? false,
      attributeMapping: dto.attributeMapping ? plainMapping(dto.attributeMapping) : (fill?.attributeMapping ?? { ...DEFAULT_ATTRIBUTE_MAPPING }),
      autoProvision: owner.partnerId ? false : (dto.autoProvision ?? true),
      defaultRoleId: dto.defaultRoleId ?? null,
      allowedDomains,
      enforceSSO: dto.enforceSSO ?? false,
      trustsIdpMfa: dto.trustsIdpMfa ?? false,
    };
  }

  /** The fields the PATCH names, normalised; `undefined` fields are left out. */
  buildPatch(principal: Principal, current: SsoProviderRecord, dto: UpdateSsoProviderDto): ProviderPatch {
    const problems: FieldProblem[] = foreignFields(current.type, dto);
    if (current.partnerId && dto.autoProvision === true) {
      problems.push({ field: 'autoProvision', message: 'A partner provider never provisions users' });
    }
    this.checkSsoUrl(problems, dto.ssoUrl);
    const patch: ProviderPatch = {};
    const copy = ['name', 'issuer', 'clientId', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'entityId', 'ssoUrl', 'nameIdFormat', 'forceAuthn', 'autoProvision', 'enforceSSO', 'trustsIdpMfa'] as const;
    for (const field of copy) {
      if (dto[field] !== undefined) Object.assign(patch, { [field]: dto[field] });
    }
    if (dto.scopes != null && current.type === 'oidc') patch.scopes = this.normalised(problems, normaliseScopes(dto.scopes));
    if (dto.allowedDomains !== undefined) patch.allowedDomains = dto.allowedDomains === null ? null : this.normalised(problems, normaliseAllowedDomains(dto.allowedDomains));
    if (dto.certificate !== undefined && current.type === 'saml') patch.certificate = dto.certificate === null ? null : this.normalised(problems, normaliseCertificates(dto.certificate));
    if (dto.attributeMapping != null) patch.attributeMapping = plainMapping(dto.attributeMapping);
    if (dto.defaultRoleId !== undefined) {
      patch.defaultRoleId = dto.defaultRoleId;
      patch.defaultRoleSetBy = dto.defaultRoleId === null ? null : principal.userId;
    }
    if (dto.clientSecret !== undefined) {
      patch.clientSecretSealed = dto.clientSecret === null ? null : this.box.encrypt(dto.clientSecret, clientSecretContext(current.id));
    }
    if (problems.length > 0) throw AppException.validation(problems);
    return patch;
  }

  /** Discovered endpoints fill the ones the request did not give explicitly; the issuer is the document's. */
  withDiscovered(issuer: string, found: DiscoveredOidcEndpoints, explicit: Partial<Record<EndpointField, string | null>>): Partial<SsoProviderConfig> {
    const result: Partial<SsoProviderConfig> = { issuer: found.issuer || issuer };
    for (const field of ENDPOINT_FIELDS) {
      if (explicit[field] == null) result[field] = found[field];
    }
    return result;
  }

  /**
   * IdP metadata (docs/sso-saml.md): (a document, or a URL fetched now) fills entityId, ssoUrl and
   * every signing certificate; fields the request gives explicitly win. Makes network calls.
   */
  async importedSamlFields(dto: Pick<CreateSsoProviderDto, 'idpMetadataXml' | 'idpMetadataUrl' | 'entityId' | 'ssoUrl' | 'certificate'>): Promise<Partial<SsoProviderConfig>> {
    const xml = dto.idpMetadataXml ?? null;
    const url = dto.idpMetadataUrl ?? null;
    if (xml === null && url === null) return {};
    if (xml !== null && url !== null) throw AppException.validation([{ field: 'idpMetadataUrl', message: 'Give idpMetadataXml or idpMetadataUrl, not both' }]);
    let metadata: IdpMetadata;
    try {
      metadata = await this.idpMetadata.load(xml !== null ? { xml } : { url: url! });
    } catch (error) {
      if (error instanceof IdpMetadataImportError) {
        if (url !== null) this.logger.warn({ reason: error.reason }, `SAML metadata import failed: ${error.message}`);
        const visible = callerVisible(error.reason, error.message);
        throw SamlErrors.metadataImportFailed(visible.reason, visible.message);
      }
      throw error;
    }
    const fields: Partial<SsoProviderConfig> = {};
    if (dto.entityId == null) {
      if (metadata.entityId.length > 500) throw SamlErrors.metadataImportFailed('entity_id_too_long', 'The IdP entity id is longer than 500 characters');
      fields.entityId = metadata.entityId;
    }
    if (dto.ssoUrl == null) {
      const problems: FieldProblem[] = [];
      this.checkSsoUrl(problems, metadata.ssoUrl);
      if (problems.length > 0 || metadata.ssoUrl.length > 500) throw SamlErrors.metadataImportFailed('sso_url_unacceptable', 'The IdP SSO URL must be an https URL of at most 500 characters');
      fields.ssoUrl = metadata.ssoUrl;
    }
    if (dto.certificate == null) {
      const certificates = normaliseCertificates(metadata.certificates.join('\n'));
      if ('problem' in certificates || certificates.value.length > MAX_CERTIFICATE_LENGTH) {
        throw SamlErrors.metadataImportFailed('invalid_certificate', 'The signing certificates of the IdP metadata cannot be stored');
      }
      fields.certificate = certificates.value;
    }
    return fields;
  }

  /** Administrator-typed endpoints obey the discovery rules (https, public addresses). */
  async assertManualEndpoints(dto: Partial<Record<EndpointField, string | null>>): Promise<void> {
    for (const field of ENDPOINT_FIELDS) {
      const url = dto[field];
      if (url == null) continue;
      try {
        await this.discovery.assertSafeEndpoints({ [field]: url });
      } catch (error) {
        if (error instanceof DiscoveryError) {
          this.logger.warn({ field, reason: error.reason }, `Administrator-entered SSO endpoint refused: ${error.message}`);
          const visible = callerVisible(error.reason, error.message);
          throw SsoErrors.invalidEndpoint(field, visible.reason, visible.message);
        }
        throw error;
      }
    }
  }

  private checkSsoUrl(problems: FieldProblem[], ssoUrl: string | null | undefined): void {
    if (ssoUrl != null && !isAcceptableBrowserUrl(ssoUrl, this.config.ssoAllowInsecureLoopbackIdp && !this.config.isProduction)) {
      problems.push({ field: 'ssoUrl', message: 'ssoUrl must be an https URL without credentials' });
    }
  }

  private normalised(problems: FieldProblem[], result: { value: string | null } | { problem: FieldProblem }): string | null {
    if ('problem' in result) {
      problems.push(result.problem);
      return null;
    }
    return result.value;
  }
}

export function ownerOf(record: Pick<SsoProviderRecord, 'orgId' | 'partnerId'>): SsoOwner {
  return record.orgId ? { orgId: record.orgId, partnerId: null } : { orgId: null, partnerId: record.partnerId as string };
}
