import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../infra/config/app-config';
import { canAccessSite, Principal } from '../../../common/principal';
import { randomToken, tokenHash } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { requireOrg, requireSite } from '../../../common/tenant-access.util';
import { SiteRepository } from '../sites/site.repository';
import { TenancyErrors } from '../tenancy.errors';
import type { AgentStatus, CreateDeviceDto, DeviceDto, DeviceEnrollmentDto, DeviceListDto, DeviceResponseDto, ListDevicesQueryDto, UpdateDeviceDto } from './device.dto';
import { DeviceRepository, type DeviceWithAgent } from './device.repository';
import { DeviceBatchRepository, type DeviceRecord } from './device-batch.repository';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** `seenSince`: the instant after which a sighting counts as online (now less AGENT_ONLINE_THRESHOLD_MS). */
function agentStatusOf(lastSeenAt: Date | null, seenSince: Date): AgentStatus {
  if (!lastSeenAt) return 'never';
  return lastSeenAt >= seenSince ? 'online' : 'offline';
}

function toDto(r: DeviceWithAgent, seenSince: Date): DeviceDto {
  return {
    id: r.id,
    orgId: r.orgId,
    siteId: r.siteId,
    hostname: r.hostname,
    osType: r.osType,
    status: r.status,
    agentId: r.agent?.id ?? null,
    enrolledAt: iso(r.agent?.createdAt ?? null),
    lastSeenAt: iso(r.agent?.lastSeenAt ?? null),
    agentStatus: agentStatusOf(r.agent?.lastSeenAt ?? null, seenSince),
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** Devices and their agent enrollment. Site-restricted callers read and write only devices of their sites. */
/** Why a write's lookup crosses the caller's sites: what lies on another site is refused with 403, not hidden as 404. */
const ANOTHER_SITE = 'a row of another site is refused with 403';

@Injectable()
export class DeviceService {
  constructor(
    private readonly repo: DeviceRepository,
    private readonly sites: SiteRepository,
    private readonly audit: AuditService,
    private readonly tx: TenantTransactionService,
    private readonly batch: DeviceBatchRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** One instant per answer, so that a list's filter and each device's agentStatus agree. */
  private seenSince(): Date {
    return new Date(Date.now() - this.config.agentOnlineThresholdMs);
  }

  async list(principal: Principal, q: ListDevicesQueryDto): Promise<DeviceListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const seenSince = this.seenSince();
    const { rows, total } = await this.repo.list(
      { orgId: q.orgId, siteId: q.siteId, status: q.status, search: q.search, agentStatus: q.agentStatus, seenSince, siteIds: principal.allowedSiteIds },
      { limit, offset: (page - 1) * limit },
    );
    return { success: true, devices: rows.map((r) => toDto(r, seenSince)), pagination: { page, limit, total } };
  }

  async get(principal: Principal, id: string): Promise<DeviceResponseDto> {
    const row = await this.repo.find(id);
    if (!row || !canAccessSite(principal, row.siteId)) throw TenancyErrors.deviceNotFound();
    return { success: true, device: toDto(row, this.seenSince()) };
  }

  async create(principal: Principal, dto: CreateDeviceDto): Promise<DeviceResponseDto> {
    const site = await this.sites.find(dto.siteId);
    if (!site || (dto.orgId !== undefined && site.orgId !== dto.orgId)) throw TenancyErrors.siteNotFound();
    requireSite(principal, site.id);
    const row = await this.repo.insert({ orgId: site.orgId, siteId: site.id, hostname: dto.hostname, osType: dto.osType ?? null });
    await this.audit.record({
      action: 'device.create',
      orgId: site.orgId,
      resourceType: 'device',
      resourceId: row.id,
      details: { hostname: dto.hostname, siteId: site.id },
    });
    return this.get(principal, row.id);
  }

  async update(principal: Principal, id: string, dto: UpdateDeviceDto): Promise<DeviceResponseDto> {
    const device = await this.tx.withAllSites(ANOTHER_SITE, () => this.repo.find(id));
    if (!device) throw TenancyErrors.deviceNotFound();
    requireSite(principal, device.siteId);
    if (dto.siteId !== undefined) {
      const site = await this.sites.find(dto.siteId);
      if (!site || site.orgId !== device.orgId) throw TenancyErrors.siteNotFound();
      requireSite(principal, site.id);
    }
    await this.repo.update(id, dto);
    // A decommissioned device must not keep a working agent credential.
    const agentsRevoked = dto.status === 'decommissioned' ? await this.repo.revokeAgents(device.orgId, id) : 0;
    await this.audit.record({
      action: 'device.update',
      orgId: device.orgId,
      resourceType: 'device',
      resourceId: id,
      details: { changed: Object.keys(dto), ...(dto.status ? { status: dto.status } : {}), ...(agentsRevoked ? { agentsRevoked } : {}) },
    });
    return this.get(principal, id);
  }

  async enroll(principal: Principal, id: string): Promise<DeviceEnrollmentDto> {
    const device = await this.tx.withAllSites(ANOTHER_SITE, () => this.repo.lock(id));
    if (!device) throw TenancyErrors.deviceNotFound();
    requireSite(principal, device.siteId);
    if (device.status === 'decommissioned') throw TenancyErrors.deviceDecommissioned();
    const revoked = await this.repo.revokeAgents(device.orgId, id);
    const agentId = randomUUID();
    const agentToken = `agt_${randomToken(32)}`;
    await this.repo.insertAgent({ id: agentId, orgId: device.orgId, deviceId: id, tokenHash: tokenHash(agentToken) });
    await this.audit.record({ action: 'device.enroll', orgId: device.orgId, resourceType: 'device', resourceId: id, details: { agentId, previousAgentsRevoked: revoked } });
    return { success: true, agentId, agentToken };
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  ofOrgs(orgIds: string[]): Promise<DeviceRecord[]> {
    return this.batch.ofOrgs(orgIds);
  }

  /** Inserts the new devices and updates the known ones, one statement each. */
  async upsertMany(inserts: DeviceRecord[], updates: DeviceRecord[]): Promise<void> {
    await this.batch.insertMany(inserts);
    await this.batch.updateMany(updates);
  }
}
