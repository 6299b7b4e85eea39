import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { TenancyErrors } from '../tenancy.errors';
import type { OrganizationEntity } from './organization.entity';
import { OrganizationRepository } from './organization.repository';
import type { CreateOrganizationDto, OrganizationDto, OrganizationListDto, OrganizationResponseDto, UpdateOrganizationDto } from './organization.dto';
import { OrganizationBatchRepository } from './organization-batch.repository';

export function toOrganizationDto(r: OrganizationEntity): OrganizationDto {
  return { id: r.id, partnerId: r.partnerId, name: r.name, status: r.status, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() };
}

@Injectable()
export class OrganizationService {
  constructor(
    private readonly repo: OrganizationRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly batch: OrganizationBatchRepository,
  ) {}

  async list(): Promise<OrganizationListDto> {
    return { success: true, organizations: await this.repo.list() };
  }

  async get(id: string): Promise<OrganizationResponseDto> {
    const row = await this.repo.find(id);
    if (!row) throw TenancyErrors.organizationNotFound();
    return { success: true, organization: toOrganizationDto(row) };
  }

  async create(principal: Principal, dto: CreateOrganizationDto): Promise<OrganizationResponseDto> {
    if (principal.scope !== 'partner' || !principal.partnerId) throw TenancyErrors.partnerRequired();
    const id = randomUUID();
    // The new organization joins this transaction's scope before it is written, so the
    // row-level-security check admits it and the caller can read it back.
    const scope = this.tx.currentScope();
    await this.tx.rescope({ ...scope, orgIds: [...scope.orgIds, id] });
    const row = await this.repo.insert({ id, partnerId: principal.partnerId, name: dto.name, status: dto.status ?? 'active' });
    await this.audit.record({ action: 'organization.create', orgId: id, resourceType: 'organization', resourceId: id, details: { name: dto.name } });
    return { success: true, organization: toOrganizationDto(row) };
  }

  async update(id: string, dto: UpdateOrganizationDto): Promise<OrganizationResponseDto> {
    const row = await this.repo.update(id, dto);
    if (!row) throw TenancyErrors.organizationNotFound();
    await this.audit.record({ action: 'organization.update', orgId: id, resourceType: 'organization', resourceId: id, details: { changed: Object.keys(dto) } });
    return { success: true, organization: toOrganizationDto(row) };
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  ofPartner(partnerId: string): Promise<{ id: string; name: string }[]> {
    return this.batch.ofPartner(partnerId);
  }

  insertWithId(id: string, partnerId: string, name: string): Promise<void> {
    return this.batch.insert(id, partnerId, name);
  }

  rename(id: string, name: string): Promise<void> {
    return this.batch.rename(id, name);
  }
}
