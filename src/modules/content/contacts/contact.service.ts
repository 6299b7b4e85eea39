import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { mapViolations } from '../../../common/errors/pg-error.util';
import { requireOrg, requireSite, targetOrg } from '../../../common/tenant-access.util';
import { canonicalContact, changedContactFields } from './contact-fields.util';
import { ContactErrors } from './contact.errors';
import type { ContactDto, ContactListDto, ContactResponseDto, CreateContactDto, ListContactsQueryDto, UpdateContactDto } from './contact.dto';
import { ContactRepository, ContactRow, ContactWrite } from './contact.repository';

export function toContactDto(r: ContactRow): ContactDto {
  return {
    id: r.id,
    orgId: r.org_id,
    siteId: r.site_id,
    name: r.name,
    email: r.email,
    phones: r.phones,
    title: r.title,
    notes: r.notes,
    externalId: r.external_id,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
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
    if (!row || (row.site_id && !canAccessSite(principal, row.site_id))) throw ContactErrors.notFound();
    return { success: true, contact: toContactDto(row) };
  }

  async create(principal: Principal, dto: CreateContactDto): Promise<ContactResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    const siteId = await this.siteOf(orgId, dto.siteId ?? null);
    requireSite(principal, siteId);
    const fields = canonicalContact({ ...dto, siteId });
    const write: ContactWrite = { ...fields, externalId: dto.externalId?.trim() || null };
    const row = await mapViolations(() => this.repo.insert(orgId, write), { unique: ContactErrors.externalIdTaken });
    await this.audit.record({ action: 'contact.create', orgId, resourceType: 'contact', resourceId: row!.id, details: { siteId } });
    return { success: true, contact: toContactDto(row!) };
  }

  async update(principal: Principal, id: string, dto: UpdateContactDto): Promise<ContactResponseDto> {
    const current = await this.writable(principal, id);
    const siteId = dto.siteId === undefined ? current.site_id : await this.siteOf(current.org_id, dto.siteId);
    requireSite(principal, siteId);
    const before = canonicalContact({ ...current, siteId: current.site_id });
    const after = canonicalContact({
      name: dto.name ?? current.name,
      email: dto.email === undefined ? current.email : dto.email,
      phones: dto.phones ?? current.phones,
      title: dto.title === undefined ? current.title : dto.title,
      notes: dto.notes === undefined ? current.notes : dto.notes,
      siteId,
    });
    const externalId = dto.externalId === undefined ? current.external_id : dto.externalId?.trim() || null;
    const row = await mapViolations(() => this.repo.update(id, { ...after, externalId }), { unique: ContactErrors.externalIdTaken });
    const changed = changedContactFields(before, after).concat(externalId !== current.external_id ? ['externalId'] : []);
    await this.audit.record({ action: 'contact.update', orgId: current.org_id, resourceType: 'contact', resourceId: id, details: { changed } });
    return { success: true, contact: toContactDto(row!) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.writable(principal, id);
    await this.repo.delete(id);
    await this.audit.record({ action: 'contact.delete', orgId: current.org_id, resourceType: 'contact', resourceId: id, details: { siteId: current.site_id } });
    return { success: true };
  }

  /** Not found when invisible; forbidden when visible but beyond the caller's sites. */
  private async writable(principal: Principal, id: string): Promise<ContactRow> {
    const row = await this.repo.find(id);
    if (!row || (row.site_id && !canAccessSite(principal, row.site_id))) throw ContactErrors.notFound();
    requireSite(principal, row.site_id);
    return row;
  }

  private async siteOf(orgId: string, siteId: string | null): Promise<string | null> {
    if (!siteId) return null;
    const site = await this.repo.siteOrg(siteId);
    if (!site || site.org_id !== orgId) throw ContactErrors.siteNotInOrganization();
    return siteId;
  }
}
