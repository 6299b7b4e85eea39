import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { randomToken, tokenHash } from '../../../infra/crypto/secret-box.service';
import { PersonAuthorityService } from '../../tenancy/users/person-authority.service';
import { AuditService } from '../../audit/audit.service';
import { normalizePermissions, notCovered } from '../../../common/permission-set.util';
import type { ApiKeyCreatedDto, ApiKeyDto, ApiKeyListDto, ApiKeyResponseDto, CreateApiKeyDto, ListApiKeysQueryDto } from './api-key.dto';
import { ApiKeyErrors } from './api-key.errors';
import type { ApiKeyEntity } from './api-key.entity';
import { ApiKeyRepository } from './api-key.repository';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toDto(r: ApiKeyEntity): ApiKeyDto {
  return {
    id: r.id,
    name: r.name,
    prefix: r.keyPrefix,
    orgId: r.orgId,
    partnerId: r.partnerId,
    permissions: r.permissions,
    mfaSatisfied: r.mfaSatisfied,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    expiresAt: iso(r.expiresAt),
    lastUsedAt: iso(r.lastUsedAt),
    revokedAt: iso(r.revokedAt),
  };
}

/**
 * API keys bound to one organization or partner-wide, with a permission list inside the
 * creator's. The secret is returned once and stored as a SHA-256 hash.
 */
@Injectable()
export class ApiKeyService {
  constructor(
    private readonly repo: ApiKeyRepository,
    private readonly audit: AuditService,
    private readonly authority: PersonAuthorityService,
  ) {}

  async list(principal: Principal, q: ListApiKeysQueryDto): Promise<ApiKeyListDto> {
    if (q.orgId && !principal.orgIds.includes(q.orgId)) throw ApiKeyErrors.organizationNotFound();
    return { success: true, apiKeys: (await this.repo.list(q.orgId)).map(toDto) };
  }

  async create(principal: Principal, dto: CreateApiKeyDto): Promise<ApiKeyCreatedDto> {
    // A key must not outlive or outreach a person: keys minting keys would escape both checks.
    if (principal.kind !== 'user') throw ApiKeyErrors.userRequired();
    if (principal.allowedSiteIds !== null) throw ApiKeyErrors.siteRestricted();
    const owner = this.owner(principal, dto.orgId);
    const missing = notCovered(principal.permissions, dto.permissions);
    if (missing.length) throw ApiKeyErrors.privilegeEscalation(missing);
    // The instant checked is the instant stored (ISO 8601 forms JavaScript cannot read, such as week dates, are refused).
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && Number.isNaN(expiresAt.getTime())) throw ApiKeyErrors.expiryUnreadable();
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw ApiKeyErrors.expiryInPast();

    const key = `sk_${randomToken(32)}`;
    const prefix = key.slice(3, 11);
    const permissions = normalizePermissions(dto.permissions);
    const mfaSatisfied = dto.mfaSatisfied === true && principal.mfa;
    const row = await this.repo.insert({
      ...owner,
      name: dto.name,
      keyPrefix: prefix,
      keyHash: tokenHash(key),
      permissions,
      mfaSatisfied,
      createdBy: principal.userId,
      expiresAt,
    });
    await this.audit.record({
      action: 'api_key.create',
      ...owner,
      resourceType: 'api_key',
      resourceId: row.id,
      details: { name: dto.name, prefix, permissions, expiresAt: dto.expiresAt ?? null, mfaSatisfied },
    });
    return { success: true, apiKey: toDto(row), key };
  }

  /** A key is its creator's credential: revoking another person's key acts on that person. */
  async revoke(principal: Principal, id: string): Promise<ApiKeyResponseDto> {
    const key = await this.repo.find(id);
    if (!key) throw ApiKeyErrors.notFound();
    if (!key.revokedAt && key.createdBy && key.createdBy !== principal.userId) {
      const tenant = key.orgId ? { orgId: key.orgId } : { partnerId: key.partnerId as string };
      await this.authority.requireMayActOn(principal.userId, key.createdBy, { kind: 'tenant', tenant });
    }
    const row = await this.repo.revoke(id);
    if (!row) throw ApiKeyErrors.notFound();
    await this.audit.record({
      action: 'api_key.revoke',
      orgId: row.orgId,
      partnerId: row.partnerId,
      resourceType: 'api_key',
      resourceId: id,
      details: { name: row.name, prefix: row.keyPrefix },
    });
    return { success: true, apiKey: toDto(row) };
  }

  /**
   * Organization keys for organizations the caller reaches. A partner-wide key reaches every
   * organization of the partner, now and later, so only a technician who has that reach may make one
   * (the database refuses it too).
   */
  private owner(principal: Principal, orgId: string | undefined): { orgId: string | null; partnerId: string | null } {
    const target = orgId ?? (principal.scope === 'organization' ? principal.orgId : null);
    if (target) {
      if (!principal.orgIds.includes(target)) throw ApiKeyErrors.organizationNotFound();
      return { orgId: target, partnerId: null };
    }
    if (!principal.partnerWide) throw ApiKeyErrors.partnerWideEscalation();
    return { orgId: null, partnerId: principal.partnerId };
  }
}
