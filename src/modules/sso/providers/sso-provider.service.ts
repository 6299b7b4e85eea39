import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception';
import { hasPermission, Principal, requireOwnerWrite, scopeOf } from '../../../common/principal';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { PrincipalResolverService } from '../../auth/principal-resolver.service';
import { ProviderDiscoveryService } from '../discovery/provider-discovery.service';
import { callerVisible, DiscoveryError } from '../../../infra/net/net.errors';
import { DiscoveredOidcEndpoints } from '../../../infra/net/oidc-discovery.util';
import { IdpMetadataImportError, IdpMetadataImporterService } from '../saml/metadata/idp-metadata-importer.service';
import { SamlErrors } from '../saml/saml.errors';
import type { IdpMetadata } from '../saml/xml/saml-metadata.util';
import { SsoErrors } from '../sso.errors';
import {
  changedFields,
  ENDPOINT_FIELDS,
  EndpointField,
  FieldProblem,
  foreignFields,
  isAcceptableBrowserUrl,
  MAX_CERTIFICATE_LENGTH,
  missingForLogin,
  normaliseAllowedDomains,
  normaliseCertificates,
  normaliseScopes,
} from './provider-config.util';
import { fillPreset, findPreset, PresetFill, SSO_PRESETS } from './sso-preset.registry';
import type {
  AttributeMappingDto,
  CreateSsoProviderDto,
  ListSsoProvidersQueryDto,
  SsoPresetListDto,
  SsoProviderDto,
  SsoProviderListDto,
  SsoProviderResponseDto,
  SsoProviderTestDto,
  SsoSuccessDto,
  SsoWarningDto,
  UpdateSsoProviderDto,
} from './sso-provider.dto';
import { ProviderPatch, SsoProviderRepository } from './sso-provider.repository';
import {
  AttributeMapping,
  clientSecretContext,
  DEFAULT_ATTRIBUTE_MAPPING,
  DEFAULT_OIDC_SCOPES,
  SsoOwner,
  SsoProviderConfig,
  SsoProviderRecord,
  SsoProviderStatus,
} from './sso-provider.types';
import { SessionService } from '../../auth/session.service';

/**
 * Fields that say which IdP account signs people in: the OIDC issuer and client id, the SAML
 * entity id. Changing one ends the sessions the provider minted; the people behind them sign in
 * again at the IdP now named.
 */
const IDENTITY_FIELDS = ['issuer', 'clientId', 'entityId'];

/** PATCH fields that are required on every provider and so cannot be cleared with null. */
const NOT_CLEARABLE = ['name', 'scopes', 'attributeMapping', 'autoProvision', 'enforceSSO', 'trustsIdpMfa', 'forceAuthn'] as const;

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

function plainMapping(dto: AttributeMappingDto): AttributeMapping {
  const mapping: AttributeMapping = { email: dto.email, name: dto.name };
  if (dto.firstName !== undefined) mapping.firstName = dto.firstName;
  if (dto.lastName !== undefined) mapping.lastName = dto.lastName;
  if (dto.groups !== undefined) mapping.groups = dto.groups;
  return mapping;
}

function discoveryWarning(error: DiscoveryError): SsoWarningDto {
  return { code: 'discovery_failed', ...callerVisible(error.reason, error.message) };
}

/**
 * Administration of SSO providers (spec 4.1). Create, update and test call the IdP, so
 * their routes run without a request transaction: the reads before and the writes after
 * each outbound call are short transactions of their own, under the caller's scope.
 */
@Injectable()
export class SsoProviderService {
  private readonly logger = new Logger(SsoProviderService.name);

  constructor(
    private readonly repo: SsoProviderRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly box: SecretBoxService,
    private readonly discovery: ProviderDiscoveryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly idpMetadata: IdpMetadataImporterService,
    private readonly principals: PrincipalResolverService,
    private readonly sessions: SessionService,
  ) {}

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

  async create(principal: Principal, dto: CreateSsoProviderDto): Promise<SsoProviderResponseDto> {
    const owner = this.createOwner(principal, dto);
    const config = this.buildCreateConfig(dto, owner);
    const scope = scopeOf(principal);

    await this.tx.run(scope, async () => {
      if (owner.orgId && !(await this.repo.organizationVisible(owner.orgId))) throw SsoErrors.organizationNotFound();
      if (config.defaultRoleId) await this.checkDefaultRole(principal, owner, config.defaultRoleId);
    });

    if (dto.type === 'saml') Object.assign(config, await this.importedSamlFields(dto));
    await this.assertManualEndpoints(dto);
    const warnings: SsoWarningDto[] = [];
    let discovery: 'succeeded' | 'failed' | 'skipped' = 'skipped';
    if (dto.type === 'oidc' && config.issuer) {
      try {
        Object.assign(config, this.withDiscovered(config.issuer, await this.discovery.discover(config.issuer), dto));
        discovery = 'succeeded';
      } catch (error) {
        if (!(error instanceof DiscoveryError)) throw error;
        // Spec 2.4: a failed discovery does not stop the creation; the endpoints can be set later.
        this.logger.warn({ issuer: config.issuer, reason: error.reason }, `OIDC discovery failed on provider creation: ${error.message}`);
        warnings.push(discoveryWarning(error));
        discovery = 'failed';
      }
    }
    if (config.enforceSSO) {
      const missing = missingForLogin(dto.type, config, !!dto.clientSecret);
      if (missing.length > 0) throw SsoErrors.providerIncomplete(missing);
    }

    const id = randomUUID();
    const record = await this.tx.run(scope, async () => {
      if (config.defaultRoleId) await this.checkDefaultRole(principal, owner, config.defaultRoleId);
      const created = await this.repo.insert({
        ...config,
        id,
        orgId: owner.orgId,
        partnerId: owner.partnerId,
        type: dto.type,
        preset: dto.preset ?? null,
        clientSecretSealed: dto.clientSecret ? this.box.encrypt(dto.clientSecret, clientSecretContext(id)) : null,
        defaultRoleSetBy: config.defaultRoleId ? principal.userId : null,
        createdBy: principal.userId,
      });
      await this.audit.record({
        action: 'sso.provider.create',
        orgId: owner.orgId,
        partnerId: owner.partnerId,
        resourceType: 'sso_provider',
        resourceId: id,
        details: { name: created.name, type: created.type, status: created.status, preset: created.preset, discovery },
      });
      return created;
    });
    return { success: true, provider: toProviderDto(record), ...(warnings.length > 0 ? { warnings } : {}) };
  }

  async update(principal: Principal, id: string, dto: UpdateSsoProviderDto): Promise<SsoProviderResponseDto> {
    const nulls = NOT_CLEARABLE.filter((field) => (dto as Record<string, unknown>)[field] === null);
    if (nulls.length > 0) throw AppException.validation(nulls.map((field) => ({ field, message: `${field} cannot be null` })));
    const scope = scopeOf(principal);

    const current = await this.tx.run(scope, async () => {
      const found = await this.repo.find(id);
      if (!found) throw SsoErrors.providerNotFound();
      requireOwnerWrite(principal, found);
      if (dto.defaultRoleId) await this.checkDefaultRole(principal, ownerOf(found), dto.defaultRoleId);
      return found;
    });
    const patch = this.buildPatch(principal, current, dto);
    if (current.type === 'saml') Object.assign(patch, await this.importedSamlFields(dto));

    await this.assertManualEndpoints(dto);
    let discovered = false;
    // Re-sending the same issuer retries discovery when an earlier one left endpoints missing.
    const endpointMissing = ENDPOINT_FIELDS.some((field) => !current[field]);
    if (current.type === 'oidc' && typeof dto.issuer === 'string' && (dto.issuer !== current.issuer || endpointMissing)) {
      let endpoints: DiscoveredOidcEndpoints;
      try {
        endpoints = await this.discovery.discover(dto.issuer);
      } catch (error) {
        if (!(error instanceof DiscoveryError)) throw error;
        // Spec 1.2.5: an issuer change needs a fresh, successful discovery; nothing is changed.
        this.logger.warn({ issuer: dto.issuer, reason: error.reason }, `OIDC discovery failed on an issuer change: ${error.message}`);
        const visible = callerVisible(error.reason, error.message);
        throw SsoErrors.discoveryFailed(visible.reason, visible.message, error.endpoint);
      }
      Object.assign(patch, this.withDiscovered(dto.issuer, endpoints, dto));
      discovered = true;
    }

    const merged = { ...current, ...patch };
    const hasSecret = patch.clientSecretSealed !== undefined ? patch.clientSecretSealed !== null : current.clientSecretSealed !== null;
    if (merged.status === 'active' || merged.enforceSSO) {
      const missing = missingForLogin(current.type, merged, hasSecret);
      if (missing.length > 0) throw SsoErrors.providerIncomplete(missing);
    }

    const { changed, effective } = this.effectiveChanges(current, patch);
    if (changed.length === 0) return { success: true, provider: toProviderDto(current) };

    const record = await this.tx.run(scope, async () => {
      if (effective.defaultRoleId) await this.checkDefaultRole(principal, ownerOf(current), effective.defaultRoleId);
      const updated = await this.repo.update(id, current.generation, effective, principal.userId);
      if (!updated) throw (await this.repo.find(id)) ? SsoErrors.providerChanged() : SsoErrors.providerNotFound();
      const sessionsRevoked = changed.some((field) => IDENTITY_FIELDS.includes(field)) ? await this.endMintedSessions(id, 'sso_provider_reconfigured') : 0;
      await this.audit.record({
        action: 'sso.provider.update',
        orgId: updated.orgId,
        partnerId: updated.partnerId,
        resourceType: 'sso_provider',
        resourceId: id,
        details: { changed, generation: updated.generation, sessionsRevoked, ...(discovered ? { discovery: 'succeeded' } : {}) },
      });
      return updated;
    });
    return { success: true, provider: toProviderDto(record) };
  }

  /** Runs in the request transaction; the row lock orders it against a concurrent update. */
  async setStatus(id: string, status: SsoProviderStatus, principal: Principal): Promise<SsoProviderResponseDto> {
    const current = await this.repo.find(id, { forUpdate: true });
    if (!current) throw SsoErrors.providerNotFound();
    requireOwnerWrite(principal, current);
    if (current.status === status) return { success: true, provider: toProviderDto(current) };
    if (status === 'active') {
      const missing = missingForLogin(current.type, current, current.clientSecretSealed !== null);
      if (missing.length > 0) throw SsoErrors.providerIncomplete(missing);
    }
    const updated = (await this.repo.setStatus(id, status, principal.userId)) as SsoProviderRecord;
    // Out of service means out of service for everyone it signed in, not only for new sign-ins.
    const sessionsRevoked = status === 'active' ? 0 : await this.endMintedSessions(id, 'sso_provider_deactivated');
    await this.audit.record({
      action: 'sso.provider.status.update',
      orgId: updated.orgId,
      partnerId: updated.partnerId,
      resourceType: 'sso_provider',
      resourceId: id,
      details: { from: current.status, to: status, generation: updated.generation, sessionsRevoked },
    });
    return { success: true, provider: toProviderDto(updated) };
  }

  /**
   * Runs in the request transaction: the provider, its login sessions and identity links go
   * together, and the sessions it minted end with it.
   */
  async remove(id: string): Promise<SsoSuccessDto> {
    // Visible to the caller, and locked against a sign-in finishing meanwhile.
    if (!(await this.repo.find(id, { forUpdate: true }))) throw SsoErrors.providerNotFound();
    const loginSessions = await this.tx.withSystemContext('login sessions of a provider being deleted are counted for its audit row', () =>
      this.repo.countLoginSessions(id),
    );
    const removed = await this.repo.delete(id);
    if (!removed) throw SsoErrors.providerNotFound();
    const sessionsRevoked = await this.endMintedSessions(id, 'sso_provider_deleted');
    await this.audit.record({
      action: 'sso.provider.delete',
      orgId: removed.record.orgId,
      partnerId: removed.record.partnerId,
      resourceType: 'sso_provider',
      resourceId: id,
      details: { name: removed.record.name, type: removed.record.type, loginSessionsRemoved: loginSessions, identityLinksRemoved: removed.identities, sessionsRevoked },
    });
    return { success: true };
  }

  /**
   * Ends the sessions the provider minted (and their refresh tokens) in the caller's
   * transaction, so they end exactly when the change commits, and drops them from this
   * instance's principal cache. Other users' sessions are only visible in system context.
   */
  private async endMintedSessions(providerId: string, reason: string): Promise<number> {
    const ended = await this.tx.withSystemContext("a provider's change ends the sessions it minted, whoever holds them", async () => {
      const sessions = await this.sessions.endMintedBy(providerId, reason);
      await this.repo.dropExchangeCodes(sessions.map((x) => x.id));
      return sessions;
    });
    for (const session of ended) this.principals.forgetSession(session.id);
    return ended.length;
  }

  /** Checks the IdP answers: OIDC discovery, or for SAML whether the SSO URL's server answers. */
  async test(principal: Principal, id: string): Promise<SsoProviderTestDto> {
    const scope = scopeOf(principal);
    const current = await this.tx.run(scope, () => this.repo.find(id));
    if (!current) throw SsoErrors.providerNotFound();

    const precise = await this.runTest(current);
    if (precise.error) this.logger.warn({ providerId: id, reason: precise.error.reason }, `SSO provider test failed: ${precise.error.message}`);
    const result: SsoProviderTestDto = precise.error ? { ...precise, error: callerVisible(precise.error.reason, precise.error.message) } : precise;
    await this.tx.run(scope, () =>
      this.audit.record({
        action: 'sso.provider.test',
        orgId: current.orgId,
        partnerId: current.partnerId,
        resourceType: 'sso_provider',
        resourceId: id,
        details: { type: current.type, reachable: result.reachable, ...(result.error ? { reason: result.error.reason } : {}) },
      }),
    );
    return result;
  }

  private async runTest(current: SsoProviderRecord): Promise<SsoProviderTestDto> {
    if (current.type === 'saml') {
      if (!current.ssoUrl) return { success: true, reachable: false, error: { reason: 'not_configured', message: 'The provider has no SSO URL' } };
      const probe = await this.discovery.probe(current.ssoUrl);
      return probe.reachable
        ? { success: true, reachable: true }
        : { success: true, reachable: false, error: { reason: probe.error.reason, message: probe.error.message } };
    }
    if (!current.issuer) return { success: true, reachable: false, error: { reason: 'not_configured', message: 'The provider has no issuer' } };
    try {
      const found = await this.discovery.discover(current.issuer);
      const endpointsMatch =
        found.issuer === current.issuer &&
        found.authorizationUrl === current.authorizationUrl &&
        found.tokenUrl === current.tokenUrl &&
        found.userInfoUrl === current.userInfoUrl &&
        found.jwksUrl === current.jwksUrl;
      return { success: true, reachable: true, discovered: found, endpointsMatch };
    } catch (error) {
      if (!(error instanceof DiscoveryError)) throw error;
      return { success: true, reachable: false, error: { reason: error.reason, message: error.message } };
    }
  }

  /**
   * What a patch really changes, as the columns to write and the API field names to audit.
   * A new secret always counts (ciphertexts cannot be compared); re-saving the same default
   * role counts when it moves the delegation to another administrator.
   */
  private effectiveChanges(current: SsoProviderRecord, patch: ProviderPatch): { changed: string[]; effective: ProviderPatch } {
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

  private createOwner(principal: Principal, dto: CreateSsoProviderDto): SsoOwner {
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
  private async checkDefaultRole(principal: Principal, owner: SsoOwner, roleId: string): Promise<void> {
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

  private buildCreateConfig(dto: CreateSsoProviderDto, owner: SsoOwner): SsoProviderConfig {
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
  private buildPatch(principal: Principal, current: SsoProviderRecord, dto: UpdateSsoProviderDto): ProviderPatch {
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
  private withDiscovered(issuer: string, found: DiscoveredOidcEndpoints, explicit: Partial<Record<EndpointField, string | null>>): Partial<SsoProviderConfig> {
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
  private async importedSamlFields(dto: Pick<CreateSsoProviderDto, 'idpMetadataXml' | 'idpMetadataUrl' | 'entityId' | 'ssoUrl' | 'certificate'>): Promise<Partial<SsoProviderConfig>> {
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
  private async assertManualEndpoints(dto: Partial<Record<EndpointField, string | null>>): Promise<void> {
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
