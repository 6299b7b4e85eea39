import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg, requireSite, targetOrg } from '../../../common/tenant-access.util';
import { SiteRepository } from '../sites/site.repository';
import { TenancyErrors } from '../tenancy.errors';
import type {
  AddGroupMembersDto,
  CreateDeviceGroupDto,
  DeviceGroupDto,
  DeviceGroupListDto,
  DeviceGroupResponseDto,
  ListDeviceGroupsQueryDto,
  UpdateDeviceGroupDto,
} from './device-group.dto';
import { DeviceGroupRepository, type DeviceGroupWithMembers } from './device-group.repository';
import { DynamicDeviceGroupRepository, type DynamicGroupRecord, type DynamicGroupWrite } from './dynamic-device-group.repository';

function toDto(r: DeviceGroupWithMembers): DeviceGroupDto {
  return { id: r.id, orgId: r.orgId, siteId: r.siteId, name: r.name, deviceIds: r.deviceIds, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() };
}

/**
 * Device groups, bound to one site or organization-wide. A site-restricted caller sees only
 * groups of their sites, and organization-wide groups count as outside every site list.
 */
/** Why a write's lookup crosses the caller's sites: what lies on another site is refused with 403, not hidden as 404. */
const ANOTHER_SITE = 'a row of another site is refused with 403';

@Injectable()
export class DeviceGroupService {
  constructor(
    private readonly repo: DeviceGroupRepository,
    private readonly sites: SiteRepository,
    private readonly audit: AuditService,
    private readonly tx: TenantTransactionService,
    private readonly dynamic: DynamicDeviceGroupRepository,
  ) {}

  async list(principal: Principal, q: ListDeviceGroupsQueryDto): Promise<DeviceGroupListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const rows = await this.repo.list({ orgId: q.orgId, siteId: q.siteId, siteIds: principal.allowedSiteIds });
    return { success: true, deviceGroups: rows.map(toDto) };
  }

  async get(principal: Principal, id: string): Promise<DeviceGroupResponseDto> {
    return this.response(principal, id);
  }

  async create(principal: Principal, dto: CreateDeviceGroupDto): Promise<DeviceGroupResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    if (dto.siteId) await this.requireSiteInOrg(orgId, dto.siteId);
    requireSite(principal, dto.siteId ?? null);
    const id = await mapViolations(() => this.repo.insert({ orgId, siteId: dto.siteId ?? null, name: dto.name }), {
      unique: () => TenancyErrors.nameTaken('device group'),
    });
    await this.audit.record({ action: 'device_group.create', orgId, resourceType: 'device_group', resourceId: id, details: { name: dto.name, siteId: dto.siteId ?? null } });
    return this.response(principal, id);
  }

  async update(principal: Principal, id: string, dto: UpdateDeviceGroupDto): Promise<DeviceGroupResponseDto> {
    const group = await this.writable(principal, id);
    if (dto.siteId !== undefined) {
      if (dto.siteId !== null) await this.requireSiteInOrg(group.orgId, dto.siteId);
      requireSite(principal, dto.siteId);
    }
    await mapViolations(() => this.repo.update(id, dto), { unique: () => TenancyErrors.nameTaken('device group') });
    await this.audit.record({ action: 'device_group.update', orgId: group.orgId, resourceType: 'device_group', resourceId: id, details: { changed: Object.keys(dto) } });
    return this.response(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const group = await this.writable(principal, id);
    await this.repo.delete(id);
    await this.audit.record({ action: 'device_group.delete', orgId: group.orgId, resourceType: 'device_group', resourceId: id, details: { name: group.name } });
    return { success: true };
  }

  async addMembers(principal: Principal, id: string, dto: AddGroupMembersDto): Promise<DeviceGroupResponseDto> {
    const group = await this.writable(principal, id);
    const devices = await this.tx.withAllSites(ANOTHER_SITE, () => this.repo.devicesInOrg(group.orgId, dto.deviceIds));
    if (devices.length !== dto.deviceIds.length) throw TenancyErrors.deviceNotFound();
    for (const d of devices) requireSite(principal, d.siteId);
    const added = await this.repo.addMembers(group.orgId, id, dto.deviceIds);
    await this.audit.record({ action: 'device_group.members.add', orgId: group.orgId, resourceType: 'device_group', resourceId: id, details: { deviceIds: dto.deviceIds, added } });
    return this.response(principal, id);
  }

  async removeMember(principal: Principal, id: string, deviceId: string): Promise<DeviceGroupResponseDto> {
    const group = await this.writable(principal, id);
    const [device] = await this.tx.withAllSites(ANOTHER_SITE, () => this.repo.devicesInOrg(group.orgId, [deviceId]));
    if (!device) throw TenancyErrors.deviceNotFound();
    requireSite(principal, device.siteId);
    if ((await this.repo.removeMember(group.orgId, id, deviceId)) === 0) throw TenancyErrors.groupMemberNotFound();
    await this.audit.record({ action: 'device_group.members.remove', orgId: group.orgId, resourceType: 'device_group', resourceId: id, details: { deviceId } });
    return this.response(principal, id);
  }

  /** A group outside the caller's sites (organization-wide ones included) reads as not found. */
  private async response(principal: Principal, id: string): Promise<DeviceGroupResponseDto> {
    const row = await this.repo.find(id, principal.allowedSiteIds);
    if (!row || !canAccessSite(principal, row.siteId)) throw TenancyErrors.deviceGroupNotFound();
    return { success: true, deviceGroup: toDto(row) };
  }

  private async writable(principal: Principal, id: string): Promise<DeviceGroupWithMembers> {
    const row = await this.tx.withAllSites(ANOTHER_SITE, () => this.repo.find(id, null));
    if (!row) throw TenancyErrors.deviceGroupNotFound();
    requireSite(principal, row.siteId);
    return row;
  }

  private async requireSiteInOrg(orgId: string, siteId: string): Promise<void> {
    const site = await this.sites.find(siteId);
    if (!site || site.orgId !== orgId) throw TenancyErrors.siteNotFound();
  }

  // Dynamic groups: written for the policies module and the importer, in the caller's transaction.

  /** Every group of these organizations, with kind and filter. */
  groupsOf(orgIds: string[]): Promise<DynamicGroupRecord[]> {
    return this.dynamic.ofOrgs(orgIds);
  }

  /** Inserting the row runs the membership recompute trigger in the same transaction. */
  insertDynamic(id: string, orgId: string, g: DynamicGroupWrite): Promise<{ id: string } | null> {
    return this.dynamic.insert(id, orgId, g);
  }

  updateDynamic(id: string, g: DynamicGroupWrite): Promise<number> {
    return this.dynamic.update(id, g);
  }

  deleteDynamic(id: string): Promise<number> {
    return this.dynamic.delete(id);
  }
}
