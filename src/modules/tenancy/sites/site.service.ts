import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg, requireSite, targetOrg } from '../../../common/tenant-access.util';
import { TenancyErrors } from '../tenancy.errors';
import type { CreateSiteDto, ListSitesQueryDto, SiteDto, SiteListDto, SiteResponseDto, UpdateSiteDto } from './site.dto';
import type { SiteEntity } from './site.entity';
import { SiteRepository } from './site.repository';
import { SiteBatchRepository, type SiteSummary } from './site-batch.repository';

export function toSiteDto(r: SiteEntity): SiteDto {
  return { id: r.id, orgId: r.orgId, name: r.name, timezone: r.timezone, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() };
}

/**
 * Sites of the caller's organizations. Row-level security hides other tenants (their ids are
 * not found); a site-restricted caller reads only their sites and may write no other.
 */
@Injectable()
export class SiteService {
  constructor(
    private readonly repo: SiteRepository,
    private readonly audit: AuditService,
    private readonly batch: SiteBatchRepository,
  ) {}

  async list(principal: Principal, q: ListSitesQueryDto): Promise<SiteListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const rows = await this.repo.list({ orgId: q.orgId, siteIds: principal.allowedSiteIds });
    return { success: true, sites: rows.map(toSiteDto) };
  }

  async get(principal: Principal, id: string): Promise<SiteResponseDto> {
    const row = await this.repo.find(id);
    if (!row || !canAccessSite(principal, row.id)) throw TenancyErrors.siteNotFound();
    return { success: true, site: toSiteDto(row) };
  }

  async create(principal: Principal, dto: CreateSiteDto): Promise<SiteResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    // A new site is outside every site list, so only a caller with all sites may create one.
    requireSite(principal, null);
    const row = await mapViolations(() => this.repo.insert({ orgId, name: dto.name, timezone: dto.timezone ?? 'UTC' }), {
      unique: () => TenancyErrors.nameTaken('site'),
    });
    await this.audit.record({ action: 'site.create', orgId, resourceType: 'site', resourceId: row.id, details: { name: dto.name, timezone: row.timezone } });
    return { success: true, site: toSiteDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdateSiteDto): Promise<SiteResponseDto> {
    const current = await this.writable(principal, id);
    const row = await mapViolations(() => this.repo.update(id, dto), { unique: () => TenancyErrors.nameTaken('site') });
    await this.audit.record({ action: 'site.update', orgId: current.orgId, resourceType: 'site', resourceId: id, details: { changed: Object.keys(dto) } });
    return { success: true, site: toSiteDto(row!) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.writable(principal, id);
    await mapViolations(() => this.repo.delete(id), { foreign_key: TenancyErrors.siteInUse });
    await this.audit.record({ action: 'site.delete', orgId: current.orgId, resourceType: 'site', resourceId: id, details: { name: current.name } });
    return { success: true };
  }

  /** Not found when another tenant's (or missing); forbidden when the caller's but outside their sites. */
  private async writable(principal: Principal, id: string): Promise<SiteEntity> {
    const row = await this.repo.find(id);
    if (!row) throw TenancyErrors.siteNotFound();
    requireSite(principal, row.id);
    return row;
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  ofOrgs(orgIds: string[]): Promise<SiteSummary[]> {
    return this.batch.ofOrgs(orgIds);
  }

  insertWithId(s: { id: string; orgId: string; name: string; timezone: string }): Promise<void> {
    return this.batch.insert(s);
  }

  setNameAndTimezone(id: string, name: string, timezone: string): Promise<void> {
    return this.batch.update(id, name, timezone);
  }
}
