import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg, requireSite, targetOrg } from '../../../common/tenant-access.util';
import { canonicalContact, changedContactFields } from './contact-fields.util';
import { ContactErrors } from './contact.errors';
import type { ContactDto, ContactListDto, ContactResponseDto, CreateContactDto, ListContactsQueryDto, UpdateContactDto } from './contact.dto';
import type { ContactEntity } from './contact.entity';
import { ContactRepository, ContactWrite } from './contact.repository';
import { ContactBatchRepository, type ContactRecord } from './contact-batch.repository';

export function toContactDto(r: ContactEntity): ContactDto {
  return {
    id: r.id,
    orgId: r.orgId,
    siteId: r.siteId,
    name: r.name,
    email: r.email,
    phones: r.phones,
    title: r.title,
    notes: r.notes,
    externalId: r.externalId,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/**
 * Contacts of an organization, at organization level or pinned to one of its sites. A
 * site-restricted caller reads organization-level contacts and those of their sites, and
 * writes only contacts pinned to their sites (an organization-level contact reaches every site).
 */
@Injectable()
export class ContactService {
  constructor(
    private readonly repo: ContactRepository,
    private readonly audit: AuditService,
    private readonly batch: ContactBatchRepository,
  ) {}

  async list(principal: Principal, q: ListContactsQueryDto): Promise<ContactListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.list({
      orgId: q.orgId,
      siteId: q.siteId,
      q: q.q,
      externalId: q.externalId,
      siteIds: principal.allowedSiteIds,
      limit,
      offset: (page - 1) * limit,
    });
    return { success: true, contacts: rows.map(toContactDto), pagination: { page, limit, total } };
  }

  async get(principal: Principal, id: string): Promise<ContactResponseDto> {
    const row = await this.repo.find(id);
    if (!row || (row.siteId && !canAccessSite(principal, row.siteId))) throw ContactErrors.notFound();
    return { success: true, contact: toContactDto(row) };
  }

  async create(principal: Principal, dto: CreateContactDto): Promise<ContactResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    const siteId = await this.siteOf(orgId, dto.siteId ?? null);
    requireSite(principal, siteId);
    const fields = canonicalContact({ ...dto, siteId });
    const write: ContactWrite = { ...fields, externalId: dto.externalId?.trim() || null };
    const row = await mapViolations(() => this.repo.insert(orgId, write), { unique: ContactErrors.externalIdTaken });
    await this.audit.record({ action: 'contact.create', orgId, resourceType: 'contact', resourceId: row.id, details: { siteId } });
    return { success: true, contact: toContactDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdateContactDto): Promise<ContactResponseDto> {
    const current = await this.writable(principal, id);
    const siteId = dto.siteId === undefined ? current.siteId : await this.siteOf(current.orgId, dto.siteId);
    requireSite(principal, siteId);
    const before = canonicalContact(current);
    const after = canonicalContact({
      name: dto.name ?? current.name,
      email: dto.email === undefined ? current.email : dto.email,
      phones: dto.phones ?? current.phones,
      title: dto.title === undefined ? current.title : dto.title,
      notes: dto.notes === undefined ? current.notes : dto.notes,
      siteId,
    });
    const externalId = dto.externalId === undefined ? current.externalId : dto.externalId?.trim() || null;
    const row = await mapViolations(() => this.repo.update(id, { ...after, externalId }), { unique: ContactErrors.externalIdTaken });
    const changed = changedContactFields(before, after).concat(externalId !== current.externalId ? ['externalId'] : []);
    await this.audit.record({ action: 'contact.update', orgId: current.orgId, resourceType: 'contact', resourceId: id, details: { changed } });
    return { success: true, contact: toContactDto(row!) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.writable(principal, id);
    await this.repo.delete(id);
    await this.audit.record({ action: 'contact.delete', orgId: current.orgId, resourceType: 'contact', resourceId: id, details: { siteId: current.siteId } });
    return { success: true };
  }

  /** Not found when invisible; forbidden when visible but beyond the caller's sites. */
  private async writable(principal: Principal, id: string): Promise<ContactEntity> {
    const row = await this.repo.find(id);
    if (!row || (row.siteId && !canAccessSite(principal, row.siteId))) throw ContactErrors.notFound();
    requireSite(principal, row.siteId);
    return row;
  }

  private async siteOf(orgId: string, siteId: string | null): Promise<string | null> {
    if (!siteId) return null;
    const site = await this.repo.siteOrg(siteId);
    if (!site || site.orgId !== orgId) throw ContactErrors.siteNotInOrganization();
    return siteId;
  }

  // Bulk writes for other modules (the importer), in the caller's transaction.

  /** Oldest first. */
  ofOrgs(orgIds: string[]): Promise<ContactRecord[]> {
    return this.batch.ofOrgs(orgIds);
  }

  record(orgId: string, id: string): Promise<ContactRecord | null> {
    return this.batch.one(orgId, id);
  }

  /** Inserts the new contacts and updates the known ones, one statement each. */
  async upsertMany(inserts: ContactRecord[], updates: ContactRecord[]): Promise<void> {
    await this.batch.insertMany(inserts);
    await this.batch.updateMany(updates);
  }
}
