import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg, requireSite, targetOrg } from '../../../common/tenant-access.util';
import { PolicyErrors } from '../policy.errors';
import { filterCustomFields, FilterDefinition, filterProblems } from './device-filter.util';
import type {
  CreateDynamicGroupDto,
  DynamicGroupDto,
  DynamicGroupListDto,
  DynamicGroupResponseDto,
  GroupMembersDto,
  GroupMembersQueryDto,
  ListDynamicGroupsQueryDto,
  UpdateDynamicGroupDto,
} from './dynamic-group.dto';
import { DynamicGroupRepository, DynamicGroupRow } from './dynamic-group.repository';
import { DeviceGroupService } from '../../tenancy/device-groups/device-group.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toDto(r: DynamicGroupRow): DynamicGroupDto {
  return {
    id: r.id,
    orgId: r.org_id,
    siteId: r.site_id,
    name: r.name,
    filter: r.filter,
    memberCount: Number(r.member_count),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/**
 * Dynamic device groups: a filter on device attributes and custom-field values. Membership is
 * kept by database triggers, recomputed in the transaction that changes a device, a value or
 * the group, so it is right whichever module made the change. Site-restricted callers see and
 * write only groups bound to their sites, like static groups.
 */
@Injectable()
export class DynamicGroupService {
  constructor(
    private readonly repo: DynamicGroupRepository,
    private readonly audit: AuditService,
    private readonly groups: DeviceGroupService,
  ) {}

  async list(principal: Principal, q: ListDynamicGroupsQueryDto): Promise<DynamicGroupListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    return { success: true, groups: (await this.repo.list(q.orgId, principal.allowedSiteIds)).map(toDto) };
  }

  async get(principal: Principal, id: string): Promise<DynamicGroupResponseDto> {
    return { success: true, group: toDto(await this.readable(principal, id)) };
  }

  async members(principal: Principal, id: string, q: GroupMembersQueryDto): Promise<GroupMembersDto> {
    const group = await this.readable(principal, id);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.members(group.org_id, id, principal.allowedSiteIds, limit, (page - 1) * limit);
    return { success: true, members: rows.map((r) => ({ deviceId: r.device_id, hostname: r.hostname, siteId: r.site_id })), pagination: { page, limit, total } };
  }

  async create(principal: Principal, dto: CreateDynamicGroupDto): Promise<DynamicGroupResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    const siteId = await this.siteOf(orgId, dto.siteId ?? null);
    requireSite(principal, siteId);
    await this.checkFilter(orgId, dto.filter);
    const row = await mapViolations(() => this.groups.insertDynamic(randomUUID(), orgId, { siteId, name: dto.name, filter: dto.filter }), { unique: () => PolicyErrors.nameTaken('device group') });
    const group = (await this.repo.find(row!.id))!;
    await this.audit.record({ action: 'device_group.create', orgId, resourceType: 'device_group', resourceId: group.id, details: { name: dto.name, kind: 'dynamic', memberCount: Number(group.member_count) } });
    return { success: true, group: toDto(group) };
  }

  async update(principal: Principal, id: string, dto: UpdateDynamicGroupDto): Promise<DynamicGroupResponseDto> {
    const current = await this.writable(principal, id);
    const siteId = dto.siteId === undefined ? current.site_id : await this.siteOf(current.org_id, dto.siteId);
    requireSite(principal, siteId);
    const filter = dto.filter ?? current.filter;
    if (dto.filter) await this.checkFilter(current.org_id, filter);
    await mapViolations(() => this.groups.updateDynamic(id, { siteId, name: dto.name ?? current.name, filter }), { unique: () => PolicyErrors.nameTaken('device group') });
    const group = (await this.repo.find(id))!;
    await this.audit.record({ action: 'device_group.update', orgId: current.org_id, resourceType: 'device_group', resourceId: id, details: { changed: Object.keys(dto), memberCount: Number(group.member_count) } });
    return { success: true, group: toDto(group) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.writable(principal, id);
    const assignments = await this.repo.assignmentCount(id);
    if (assignments) throw PolicyErrors.groupInUse(assignments);
    await this.groups.deleteDynamic(id);
    await this.audit.record({ action: 'device_group.delete', orgId: current.org_id, resourceType: 'device_group', resourceId: id, details: { name: current.name, kind: 'dynamic' } });
    return { success: true };
  }

  private async checkFilter(orgId: string, filter: unknown): Promise<void> {
    const refs = filterCustomFields(filter).filter((r) => UUID.test(r));
    const defs = new Map<string, FilterDefinition>((await this.repo.definitionsFor(orgId, refs)).map((d) => [d.id, d]));
    const problems = filterProblems(filter, (ref) => defs.get(ref));
    if (problems.length) throw PolicyErrors.invalid('filter', problems);
  }

  private async readable(principal: Principal, id: string): Promise<DynamicGroupRow> {
    const row = await this.repo.find(id);
    if (!row || (principal.allowedSiteIds !== null && !(row.site_id && canAccessSite(principal, row.site_id)))) throw PolicyErrors.groupNotFound();
    return row;
  }

  private async writable(principal: Principal, id: string): Promise<DynamicGroupRow> {
    const row = await this.repo.find(id);
    if (!row) throw PolicyErrors.groupNotFound();
    requireSite(principal, row.site_id);
    return row;
  }

  private async siteOf(orgId: string, siteId: string | null): Promise<string | null> {
    if (!siteId) return null;
    const site = await this.repo.siteOrg(siteId);
    if (!site || site.org_id !== orgId) throw PolicyErrors.siteNotInOrganization();
    return siteId;
  }
}
