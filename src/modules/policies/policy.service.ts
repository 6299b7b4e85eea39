import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { newOwner, Owner, ownerScopeOf, requireOwnerWrite } from '../content/ownership.util';
import type { SuccessDto } from '../../common/pagination.dto';
import { mapViolations } from '../../common/errors/pg-error.util';
import { requireOrg } from '../../common/tenant-access.util';
import { featureProblems } from './features/policy-feature.registry';
import type { PolicyType } from './features/policy-feature.types';
import { PolicyErrors } from './policy.errors';
import type {
  AssignmentListDto,
  AssignmentResponseDto,
  CreateAssignmentDto,
  CreatePolicyDto,
  ListPoliciesQueryDto,
  PolicyAssignmentDto,
  PolicyDto,
  PolicyListDto,
  PolicyResponseDto,
  UpdatePolicyDto,
} from './policy.dto';
import type { PolicyAssignmentEntity, PolicyEntity } from './policy.entity';
import { AssignmentWrite, PolicyRepository } from './policy.repository';
import { PolicyBatchRepository, type AssignmentRecord, type AssignmentTarget, type PolicyRecord } from './policy-batch.repository';

export function toPolicyDto(r: PolicyEntity): PolicyDto {
  return {
    id: r.id,
    scope: ownerScopeOf({ partnerId: r.partnerId, orgId: r.orgId }),
    partnerId: r.partnerId,
    orgId: r.orgId,
    type: r.type,
    name: r.name,
    description: r.description,
    enabled: r.enabled,
    features: r.features,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

export function toAssignmentDto(a: PolicyAssignmentEntity): PolicyAssignmentDto {
  const targetId = { partner: a.partnerId, organization: a.orgId, site: a.siteId, device_group: a.deviceGroupId, device: a.deviceId }[a.targetLevel] as string;
  return { id: a.id, policyId: a.policyId, targetType: a.targetLevel, targetId, orgId: a.orgId, priority: a.priority, createdAt: a.createdAt.toISOString() };
}

/**
 * Configuration and patch policies (spec 2.10.6), owned by the partner (assignable in every
 * organization) or by one organization; no nested inheritance. Each policy carries settings
 * per feature and is assigned to targets at partner, organization, site, device group or
 * device level with a priority; resolution (closest level wins, then the lower priority
 * number) belongs to the consumers of a feature.
 */
@Injectable()
export class PolicyService {
  constructor(
    private readonly repo: PolicyRepository,
    private readonly audit: AuditService,
    private readonly batch: PolicyBatchRepository,
  ) {}

  async list(principal: Principal, q: ListPoliciesQueryDto): Promise<PolicyListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    return { success: true, policies: (await this.repo.list(q)).map(toPolicyDto) };
  }

  async get(id: string): Promise<PolicyResponseDto> {
    const row = await this.found(id);
    return { success: true, policy: { ...toPolicyDto(row), assignments: (await this.repo.assignments(id)).map(toAssignmentDto) } };
  }

  async create(principal: Principal, dto: CreatePolicyDto): Promise<PolicyResponseDto> {
    const owner = newOwner(principal, dto.scope, dto.orgId, 'policy');
    this.checkFeatures(dto.type, dto.features);
    const row = await mapViolations(
      () => this.repo.insert({ ...owner, type: dto.type, name: dto.name, description: dto.description ?? null, enabled: dto.enabled ?? true, features: dto.features }),
      { unique: () => PolicyErrors.nameTaken(`${dto.type} policy`) },
    );
    await this.audit.record({ action: 'policy.create', ...owner, resourceType: 'policy', resourceId: row.id, details: { type: dto.type, name: dto.name, features: Object.keys(dto.features) } });
    return { success: true, policy: { ...toPolicyDto(row), assignments: [] } };
  }

  async update(principal: Principal, id: string, dto: UpdatePolicyDto): Promise<PolicyResponseDto> {
    const current = await this.found(id);
    const owner = this.ownerOf(current);
    requireOwnerWrite(principal, owner, 'policy');
    if (dto.features) this.checkFeatures(current.type, dto.features);
    const row = await mapViolations(
      () =>
        this.repo.update(id, {
          name: dto.name ?? current.name,
          description: dto.description === undefined ? current.description : dto.description,
          enabled: dto.enabled ?? current.enabled,
          features: dto.features ?? current.features,
        }),
      { unique: () => PolicyErrors.nameTaken(`${current.type} policy`) },
    );
    await this.audit.record({ action: 'policy.update', ...owner, resourceType: 'policy', resourceId: id, details: { changed: Object.keys(dto) } });
    return { success: true, policy: { ...toPolicyDto(row!), assignments: (await this.repo.assignments(id)).map(toAssignmentDto) } };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.found(id);
    const owner = this.ownerOf(current);
    requireOwnerWrite(principal, owner, 'policy');
    const assignments = (await this.repo.assignments(id)).length;
    await this.repo.delete(id);
    await this.audit.record({ action: 'policy.delete', ...owner, resourceType: 'policy', resourceId: id, details: { name: current.name, assignmentsDeleted: assignments } });
    return { success: true };
  }

  async assignments(id: string): Promise<AssignmentListDto> {
    await this.found(id);
    return { success: true, assignments: (await this.repo.assignments(id)).map(toAssignmentDto) };
  }

  async assign(principal: Principal, id: string, dto: CreateAssignmentDto): Promise<AssignmentResponseDto> {
    const policy = await this.found(id);
    const owner = this.ownerOf(policy);
    requireOwnerWrite(principal, owner, 'policy');
    const write = await this.targetOf(policy, dto);
    const row = await mapViolations(() => this.repo.insertAssignment(write), { unique: PolicyErrors.assignmentExists });
    const assignment = toAssignmentDto(row);
    await this.audit.record({
      action: 'policy.assignment.create',
      ...(write.orgId ? { orgId: write.orgId } : { partnerId: write.partnerId }),
      resourceType: 'policy',
      resourceId: id,
      details: { assignmentId: assignment.id, targetType: dto.targetType, targetId: dto.targetId, priority: write.priority },
    });
    return { success: true, assignment };
  }

  async unassign(principal: Principal, id: string, assignmentId: string): Promise<SuccessDto> {
    const policy = await this.found(id);
    requireOwnerWrite(principal, this.ownerOf(policy), 'policy');
    const row = await this.repo.findAssignment(id, assignmentId);
    if (!row) throw PolicyErrors.assignmentNotFound();
    await this.repo.deleteAssignment(assignmentId);
    await this.audit.record({
      action: 'policy.assignment.delete',
      ...(row.orgId ? { orgId: row.orgId } : { partnerId: row.partnerId }),
      resourceType: 'policy',
      resourceId: id,
      details: { assignmentId, targetType: row.targetLevel },
    });
    return { success: true };
  }

  /**
   * Where an assignment may point: an organization policy inside its organization only; a
   * partner policy at partner level or anywhere in the partner's organizations.
   */
  private async targetOf(policy: PolicyEntity, dto: CreateAssignmentDto): Promise<AssignmentWrite> {
    const priority = dto.priority ?? 100;
    const base = { policyId: policy.id, level: dto.targetType, priority, siteId: null, groupId: null, deviceId: null };
    if (dto.targetType === 'partner') {
      if (policy.orgId) throw PolicyErrors.targetLevelNotAllowed('partner', 'organization');
      if (dto.targetId !== policy.partnerId) throw PolicyErrors.targetNotFound();
      return { ...base, partnerId: policy.partnerId, orgId: null };
    }
    const target = await this.repo.targetOrg(dto.targetType, dto.targetId);
    const reachable = target && (policy.orgId ? target.org_id === policy.orgId : target.partner_id === policy.partnerId);
    if (!target || !reachable) throw PolicyErrors.targetNotFound();
    return {
      ...base,
      partnerId: target.partner_id,
      orgId: target.org_id,
      siteId: dto.targetType === 'site' ? dto.targetId : null,
      groupId: dto.targetType === 'device_group' ? dto.targetId : null,
      deviceId: dto.targetType === 'device' ? dto.targetId : null,
    };
  }

  private checkFeatures(type: PolicyType, features: unknown): void {
    const problems = featureProblems(type, features);
    if (problems.length) throw PolicyErrors.invalid('features', problems);
  }

  private ownerOf(p: PolicyEntity): Owner {
    return { partnerId: p.partnerId, orgId: p.orgId };
  }

  private async found(id: string): Promise<PolicyEntity> {
    const row = await this.repo.find(id);
    if (!row) throw PolicyErrors.notFound();
    return row;
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  ofOwners(partnerId: string, orgIds: string[]): Promise<PolicyRecord[]> {
    return this.batch.ofOwners(partnerId, orgIds);
  }

  save(p: PolicyRecord, insert: boolean): Promise<void> {
    return this.batch.save(p, insert);
  }

  assignmentsOf(policyIds: string[]): Promise<AssignmentTarget[]> {
    return this.batch.assignments(policyIds);
  }

  /** Inserts the new assignments and sets the priorities of known ones, one statement each. */
  async upsertAssignments(inserts: AssignmentRecord[], priorities: { id: string; priority: number }[]): Promise<void> {
    await this.batch.insertAssignments(inserts);
    await this.batch.updatePriorities(priorities);
  }
}
