import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg } from '../../../common/tenant-access.util';
import { newOwner, ownerScopeOf, requireOwnerWrite } from '../ownership.util';
import type { Problem } from '../../../common/shape/path.util';
import { canonicalMapping, canonicalParameters, ExitCodeSeverity, mappingProblems, parameterProblems, ScriptParameter } from './script-shape.util';
import { ScriptErrors } from './script.errors';
import type { CreateScriptDto, ListScriptsQueryDto, ScriptDto, ScriptListDto, ScriptResponseDto, ScriptSummaryDto, UpdateScriptDto } from './script.dto';
import type { ScriptEntity, ScriptSummary } from './script.entity';
import { ScriptRepository, ScriptWrite } from './script.repository';
import { ScriptBatchRepository, type ScriptRecord } from './script-batch.repository';

export function toScriptSummaryDto(r: ScriptSummary): ScriptSummaryDto {
  return {
    id: r.id,
    availability: ownerScopeOf({ partnerId: r.partnerId, orgId: r.orgId }),
    partnerId: r.partnerId,
    orgId: r.orgId,
    name: r.name,
    description: r.description,
    category: r.category,
    language: r.language,
    runAs: r.runAs,
    timeoutSeconds: r.timeoutSeconds,
    parameters: r.parameters,
    exitCodeSeverityMapping: r.exitCodeSeverityMapping,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

function toScriptDto(r: ScriptEntity): ScriptDto {
  return { ...toScriptSummaryDto(r), body: r.body };
}

/** Problems of the parts of a script that relate entries to each other (the DTO checks each value). */
export function scriptProblems(s: { parameters: unknown; exitCodeSeverityMapping: unknown }): Problem[] {
  return [
    ...parameterProblems(s.parameters).map(([p, m]): Problem => [['parameters', ...p], m]),
    ...mappingProblems(s.exitCodeSeverityMapping).map(([p, m]): Problem => [['exitCodeSeverityMapping', ...p], m]),
  ];
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Scripts with typed parameters and an exit-code severity mapping, available partner-wide or
 * to one organization (spec 2.10.5). The audit trail records a hash of each body version.
 */
@Injectable()
export class ScriptService {
  constructor(
    private readonly repo: ScriptRepository,
    private readonly audit: AuditService,
    private readonly batch: ScriptBatchRepository,
  ) {}

  async list(principal: Principal, q: ListScriptsQueryDto): Promise<ScriptListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.list({ ...q, limit, offset: (page - 1) * limit });
    return { success: true, scripts: rows.map(toScriptSummaryDto), pagination: { page, limit, total } };
  }

  async get(id: string): Promise<ScriptResponseDto> {
    return { success: true, script: toScriptDto(await this.found(id)) };
  }

  async create(principal: Principal, dto: CreateScriptDto): Promise<ScriptResponseDto> {
    const owner = newOwner(principal, dto.availability, dto.orgId, 'script');
    const write = this.checked({
      name: dto.name,
      description: dto.description ?? null,
      category: dto.category ?? 'General',
      language: dto.language,
      body: dto.body,
      runAs: dto.runAs ?? 'system',
      timeoutSeconds: dto.timeoutSeconds ?? 300,
      parameters: (dto.parameters ?? []) as ScriptParameter[],
      exitCodeSeverityMapping: (dto.exitCodeSeverityMapping ?? []) as ExitCodeSeverity[],
    });
    const row = await mapViolations(() => this.repo.insert(owner, write), { unique: ScriptErrors.nameTaken });
    await this.audit.record({
      action: 'script.create',
      ...owner,
      resourceType: 'script',
      resourceId: row.id,
      details: { name: write.name, runAs: write.runAs, language: write.language, bodySha256: sha256(write.body) },
    });
    return { success: true, script: toScriptDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdateScriptDto): Promise<ScriptResponseDto> {
    const current = await this.found(id);
    const owner = { partnerId: current.partnerId, orgId: current.orgId };
    requireOwnerWrite(principal, owner, 'script');
    const write = this.checked({
      name: dto.name ?? current.name,
      description: dto.description === undefined ? current.description : dto.description,
      category: dto.category ?? current.category,
      language: dto.language ?? current.language,
      body: dto.body ?? current.body,
      runAs: dto.runAs ?? current.runAs,
      timeoutSeconds: dto.timeoutSeconds ?? current.timeoutSeconds,
      parameters: (dto.parameters ?? current.parameters) as ScriptParameter[],
      exitCodeSeverityMapping: (dto.exitCodeSeverityMapping ?? current.exitCodeSeverityMapping) as ExitCodeSeverity[],
    });
    const row = await mapViolations(() => this.repo.update(id, write), { unique: ScriptErrors.nameTaken });
    await this.audit.record({
      action: 'script.update',
      ...owner,
      resourceType: 'script',
      resourceId: id,
      details: { changed: Object.keys(dto), runAs: write.runAs, bodySha256: sha256(write.body) },
    });
    return { success: true, script: toScriptDto(row!) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.found(id);
    const owner = { partnerId: current.partnerId, orgId: current.orgId };
    requireOwnerWrite(principal, owner, 'script');
    await this.repo.delete(id);
    await this.audit.record({ action: 'script.delete', ...owner, resourceType: 'script', resourceId: id, details: { name: current.name } });
    return { success: true };
  }

  private checked(w: ScriptWrite): ScriptWrite {
    const problems = scriptProblems(w);
    if (problems.length) throw ScriptErrors.invalid(problems);
    return { ...w, parameters: canonicalParameters(w.parameters), exitCodeSeverityMapping: canonicalMapping(w.exitCodeSeverityMapping) };
  }

  private async found(id: string): Promise<ScriptEntity> {
    const row = await this.repo.find(id);
    if (!row) throw ScriptErrors.notFound();
    return row;
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  ofOwners(partnerId: string, orgIds: string[]): Promise<ScriptRecord[]> {
    return this.batch.ofOwners(partnerId, orgIds);
  }

  save(s: ScriptRecord, insert: boolean): Promise<void> {
    return this.batch.save(s, insert);
  }
}
