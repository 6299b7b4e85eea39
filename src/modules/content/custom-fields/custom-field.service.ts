import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg } from '../../../common/tenant-access.util';
import { newOwner, Owner, ownerScopeOf, requireOwnerWrite } from '../ownership.util';
import { canonicalOptions, CustomFieldValidation, definitionProblems } from './custom-field-value.util';
import { CustomFieldErrors } from './custom-field.errors';
import type { CreateCustomFieldDto, CustomFieldDto, CustomFieldListDto, CustomFieldResponseDto, ListCustomFieldsQueryDto, UpdateCustomFieldDto } from './custom-field.dto';
import type { CustomFieldEntity } from './custom-field.entity';
import { CustomFieldRepository } from './custom-field.repository';
import { CustomFieldBatchRepository, type CustomFieldRecord, type CustomFieldValueRecord } from './custom-field-batch.repository';

export function toCustomFieldDto(r: CustomFieldEntity): CustomFieldDto {
  return {
    id: r.id,
    scope: ownerScopeOf({ partnerId: r.partnerId, orgId: r.orgId }),
    partnerId: r.partnerId,
    orgId: r.orgId,
    key: r.key,
    name: r.name,
    description: r.description,
    type: r.type,
    options: r.options,
    validation: r.validation,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** Drops rules left undefined by the DTO, so stored validation compares by content. */
function cleanValidation(v: CustomFieldValidation | undefined): CustomFieldValidation {
  return Object.fromEntries(Object.entries(v ?? {}).filter(([, x]) => x !== undefined)) as CustomFieldValidation;
}

/**
 * Custom field definitions: partner-wide (every organization of the partner) or owned by one
 * organization; never site-level (spec 2.10.3). A key is unique among the fields one
 * organization sees, so a value import can name a field by key alone.
 */
@Injectable()
export class CustomFieldService {
  constructor(
    private readonly repo: CustomFieldRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly batch: CustomFieldBatchRepository,
  ) {}

  async list(principal: Principal, q: ListCustomFieldsQueryDto): Promise<CustomFieldListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    return { success: true, customFields: (await this.repo.list(q)).map(toCustomFieldDto) };
  }

  async get(id: string): Promise<CustomFieldResponseDto> {
    return { success: true, customField: toCustomFieldDto(await this.found(id)) };
  }

  async create(principal: Principal, dto: CreateCustomFieldDto): Promise<CustomFieldResponseDto> {
    const owner = newOwner(principal, dto.scope, dto.orgId, 'custom field');
    const options = canonicalOptions(dto.options);
    const validation = cleanValidation(dto.validation);
    const problems = definitionProblems({ type: dto.type, options, validation });
    if (problems.length) throw CustomFieldErrors.invalidDefinition(problems);
    await this.requireFreeKey(owner, dto.key);
    const row = await mapViolations(
      () => this.repo.insert({ ...owner, key: dto.key, name: dto.name, description: dto.description ?? null, type: dto.type, options, validation }),
      { unique: () => CustomFieldErrors.keyTaken(dto.key) },
    );
    await this.audit.record({ action: 'custom_field.create', ...owner, resourceType: 'custom_field', resourceId: row.id, details: { key: dto.key, type: dto.type } });
    return { success: true, customField: toCustomFieldDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdateCustomFieldDto): Promise<CustomFieldResponseDto> {
    const current = await this.found(id);
    const owner = { partnerId: current.partnerId, orgId: current.orgId };
    requireOwnerWrite(principal, owner, 'custom field');
    const options = dto.options === undefined ? current.options : canonicalOptions(dto.options);
    const validation = dto.validation === undefined ? current.validation : cleanValidation(dto.validation);
    const problems = definitionProblems({ type: current.type, options, validation });
    if (problems.length) throw CustomFieldErrors.invalidDefinition(problems);
    const removed = current.options.filter((o) => !options.includes(o));
    const inUse = await this.tx.withSystemContext('values of a partner-wide field live in organizations the caller may not see', () =>
      this.repo.optionsInUse(id, removed),
    );
    if (inUse.length) throw CustomFieldErrors.optionInUse(inUse);
    const row = await this.repo.update(id, {
      name: dto.name ?? current.name,
      description: dto.description === undefined ? current.description : dto.description,
      options,
      validation,
    });
    await this.audit.record({ action: 'custom_field.update', ...owner, resourceType: 'custom_field', resourceId: id, details: { changed: Object.keys(dto) } });
    return { success: true, customField: toCustomFieldDto(row!) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.found(id);
    const owner = { partnerId: current.partnerId, orgId: current.orgId };
    requireOwnerWrite(principal, owner, 'custom field');
    // The decision sees every organization; the answer names only the groups the caller can see.
    const { referenced, values } = await this.tx.withSystemContext('groups and values of a partner-wide field live in every organization', async () => ({
      referenced: await this.repo.isUsedByGroups(id),
      values: await this.repo.countValues(id),
    }));
    if (referenced) throw CustomFieldErrors.inUseByGroups(await this.repo.visibleGroupsUsing(id, principal.allowedSiteIds));
    await this.repo.delete(id);
    await this.audit.record({ action: 'custom_field.delete', ...owner, resourceType: 'custom_field', resourceId: id, details: { key: current.key, valuesDeleted: values } });
    return { success: true };
  }

  private async found(id: string): Promise<CustomFieldEntity> {
    const row = await this.repo.find(id);
    if (!row) throw CustomFieldErrors.notFound();
    return row;
  }

  private async requireFreeKey(owner: Owner, key: string): Promise<void> {
    const clash = await this.tx.withSystemContext('a key must not clash with a field of an organization the caller may not see', () => this.repo.keyClash(owner, key));
    if (clash) throw CustomFieldErrors.keyTaken(key);
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  definitionsOf(partnerId: string, orgIds: string[]): Promise<CustomFieldRecord[]> {
    return this.batch.definitions(partnerId, orgIds);
  }

  /** Keys of organization fields anywhere under the partner (a partner-wide key must not reuse one). */
  orgFieldKeys(partnerId: string): Promise<Set<string>> {
    return this.batch.orgFieldKeys(partnerId);
  }

  saveDefinition(d: CustomFieldRecord, insert: boolean): Promise<void> {
    return insert ? this.batch.insertDefinition(d) : this.batch.updateDefinition(d);
  }

  /** Which of these options some device's value still uses. */
  optionsInUse(definitionId: string, options: string[]): Promise<string[]> {
    return this.repo.optionsInUse(definitionId, options);
  }

  valuesOf(orgIds: string[]): Promise<CustomFieldValueRecord[]> {
    return this.batch.values(orgIds);
  }

  /** Writes values; rows already present are replaced (the caller decides which rows to send). */
  upsertValues(rows: CustomFieldValueRecord[]): Promise<void> {
    return this.batch.upsertValues(rows);
  }
}
