import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception';
import { Principal, requireOwnerWrite, scopeOf } from '../../../common/principal';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { callerVisible, DiscoveryError } from '../../../infra/net/net.errors';
import { DiscoveredOidcEndpoints } from '../../../infra/net/oidc-discovery.util';
import { AuditService } from '../../audit/audit.service';
import { PrincipalResolverService } from '../../auth/principal-resolver.service';
import { SessionService } from '../../auth/session.service';
import { ProviderDiscoveryService } from '../discovery/provider-discovery.service';
import { SsoErrors } from '../sso.errors';
import { ENDPOINT_FIELDS } from '../discovery/oidc-endpoint-fields';
import { missingForLogin } from './provider-config.util';
import { ownerOf, SsoProviderConfigBuilderService } from './sso-provider-config-builder.service';
import type { SsoSuccessDto } from '../sso.dto';
import type { CreateSsoProviderDto, SsoProviderResponseDto, SsoWarningDto, UpdateSsoProviderDto } from './sso-provider.dto';
import { toProviderDto } from './sso-provider-read.service';
import { SsoProviderRepository } from './sso-provider.repository';
import { clientSecretContext, SsoProviderRecord, SsoProviderStatus } from './sso-provider.types';

/**
 * Fields that say which IdP account signs people in: the OIDC issuer and client id, the SAML
 * entity id. Changing one ends the sessions the provider minted; the people behind them sign in
 * again at the IdP now named.
 */
const IDENTITY_FIELDS = ['issuer', 'clientId', 'entityId'];

/** PATCH fields that are required on every provider and so cannot be cleared with null. */
const NOT_CLEARABLE = ['name', 'scopes', 'attributeMapping', 'autoProvision', 'enforceSSO', 'trustsIdpMfa', 'forceAuthn'] as const;

function discoveryWarning(error: DiscoveryError): SsoWarningDto {
  return { code: 'discovery_failed', ...callerVisible(error.reason, error.message) };
}

/**
 * Changes to SSO providers (spec 4.1): create, update, status and delete, each audited; a change
 * that takes a provider out of service or names another IdP account ends the sessions it minted.
 * Create and update call the IdP, so their routes run without a request transaction: the reads
 * before and the writes after each outbound call are short transactions of their own, under the
 * caller's scope.
 */
@Injectable()
export class SsoProviderWriteService {
  private readonly logger = new Logger(SsoProviderWriteService.name);

  constructor(
    private readonly repo: SsoProviderRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly box: SecretBoxService,
    private readonly builder: SsoProviderConfigBuilderService,
    private readonly discovery: ProviderDiscoveryService,
    private readonly principals: PrincipalResolverService,
    private readonly sessions: SessionService,
  ) {}

  async create(principal: Principal, dto: CreateSsoProviderDto): Promise<SsoProviderResponseDto> {
    const owner = this.builder.createOwner(principal, dto);
    const config = this.builder.buildCreateConfig(dto, owner);
    const scope = scopeOf(principal);

    await this.tx.run(scope, async () => {
      if (owner.orgId && !(await this.repo.organizationVisible(owner.orgId))) throw SsoErrors.organizationNotFound();
      if (config.defaultRoleId) await this.builder.checkDefaultRole(principal, owner, config.defaultRoleId);
    });

    if (dto.type === 'saml') Object.assign(config, await this.builder.importedSamlFields(dto));
    await this.builder.assertManualEndpoints(dto);
    const warnings: SsoWarningDto[] = [];
    let discovery: 'succeeded' | 'failed' | 'skipped' = 'skipped';
    if (dto.type === 'oidc' && config.issuer) {
      try {
        Object.assign(config, this.builder.withDiscovered(config.issuer, await this.discovery.discover(config.issuer), dto));
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
      if (config.defaultRoleId) await this.builder.checkDefaultRole(principal, owner, config.defaultRoleId);
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
      if (dto.defaultRoleId) await this.builder.checkDefaultRole(principal, ownerOf(found), dto.defaultRoleId);
      return found;
    });
    const patch = this.builder.buildPatch(principal, current, dto);
    if (current.type === 'saml') Object.assign(patch, await this.builder.importedSamlFields(dto));

    await this.builder.assertManualEndpoints(dto);
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
      Object.assign(patch, this.builder.withDiscovered(dto.issuer, endpoints, dto));
      discovered = true;
    }

    const merged = { ...current, ...patch };
    const hasSecret = patch.clientSecretSealed !== undefined ? patch.clientSecretSealed !== null : current.clientSecretSealed !== null;
    if (merged.status === 'active' || merged.enforceSSO) {
      const missing = missingForLogin(current.type, merged, hasSecret);
      if (missing.length > 0) throw SsoErrors.providerIncomplete(missing);
    }

    const { changed, effective } = this.builder.effectiveChanges(current, patch);
    if (changed.length === 0) return { success: true, provider: toProviderDto(current) };

    const record = await this.tx.run(scope, async () => {
      if (effective.defaultRoleId) await this.builder.checkDefaultRole(principal, ownerOf(current), effective.defaultRoleId);
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
}
