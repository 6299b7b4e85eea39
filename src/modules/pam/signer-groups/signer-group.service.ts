import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { AuditService } from '../../audit/audit.service';
import { PamErrors } from '../pam.errors';
import { RulesVersionRepository } from '../rules/rules-version.repository';
import type { PamSuccessDto } from '../rules/pam-rule.dto';
import { requireOrg, requireSiteWrite, targetOrg } from '../pam-access.util';
import type {
  CreateSignerGroupDto,
  ListSignerGroupsQueryDto,
  SignerGroupDto,
  SignerGroupListDto,
  SignerGroupResponseDto,
  UpdateSignerGroupDto,
} from './signer-group.dto';
import { SignerGroupRepository, type SignerGroupRow } from './signer-group.repository';
import { normaliseSigners } from './signer-list.util';

export function toSignerGroupDto(r: SignerGroupRow): SignerGroupDto {
  return {
    id: r.id,
    orgId: r.org_id,
    name: r.name,
    description: r.description,
    signers: r.signers,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/**
 * Signer groups (spec P2.3, P4.3). A group belongs to the whole organization, so reading it
 * needs only the organization; writing it needs every site of it, like an organization-wide
 * rule. Writes bump the rules version: rules that reference the group match differently.
 */
@Injectable()
export class SignerGroupService {
  constructor(
    private readonly groups: SignerGroupRepository,
    private readonly versions: RulesVersionRepository,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal, q: ListSignerGroupsQueryDto): Promise<SignerGroupListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const rows = await this.groups.list(q.orgId ?? null);
    return { success: true, signerGroups: rows.map(toSignerGroupDto) };
  }

  async create(principal: Principal, dto: CreateSignerGroupDto): Promise<SignerGroupResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    requireSiteWrite(principal, null);
    const signers = normaliseSigners(dto.signers);
    const row = await mapViolations(
      () => this.groups.insert({ orgId, name: dto.name, description: dto.description ?? null, signers, createdBy: principal.userId }),
      { unique: PamErrors.signerGroupNameTaken },
    );
    await this.versions.bump(orgId);
    await this.audit.record({ action: 'pam_signer_group.create', orgId, resourceType: 'pam_signer_group', resourceId: row.id, details: { name: row.name, signerCount: signers.length } });
    return { success: true, signerGroup: toSignerGroupDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdateSignerGroupDto): Promise<SignerGroupResponseDto> {
    const current = await this.writable(principal, id);
    const next = {
      name: dto.name ?? current.name,
      description: dto.description === undefined ? current.description : dto.description,
      signers: dto.signers === undefined ? current.signers : normaliseSigners(dto.signers),
    };
    const row = await mapViolations(() => this.groups.update(id, next), { unique: PamErrors.signerGroupNameTaken });
    // Deleted by another request since it was read.
    if (!row) throw PamErrors.signerGroupNotFound();
    await this.versions.bump(current.org_id);
    const changed = Object.keys(dto).filter((key) => (dto as Record<string, unknown>)[key] !== undefined);
    await this.audit.record({ action: 'pam_signer_group.update', orgId: current.org_id, resourceType: 'pam_signer_group', resourceId: id, details: { name: row.name, changed } });
    return { success: true, signerGroup: toSignerGroupDto(row) };
  }

  async delete(principal: Principal, id: string): Promise<PamSuccessDto> {
    await this.writable(principal, id);
    // The row lock makes rules created concurrently with a reference wait, so the count is final.
    const current = await this.groups.lock(id);
    if (!current) throw PamErrors.signerGroupNotFound();
    const ruleCount = await this.groups.referencingRuleCount(current.org_id, id);
    if (ruleCount > 0) throw PamErrors.signerGroupInUse(ruleCount);
    await this.groups.delete(id);
    await this.versions.bump(current.org_id);
    await this.audit.record({ action: 'pam_signer_group.delete', orgId: current.org_id, resourceType: 'pam_signer_group', resourceId: id, details: { name: current.name } });
    return { success: true };
  }

  private async writable(principal: Principal, id: string): Promise<SignerGroupRow> {
    const row = await this.groups.find(id);
    if (!row) throw PamErrors.signerGroupNotFound();
    requireSiteWrite(principal, null);
    return row;
  }
}
