import { randomUUID } from 'node:crypto';
import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { canAccessSite, Principal, scopeOf } from '../../common/principal';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { AuditService } from '../audit/audit.service';
import { canonicalContact } from '../content/contacts/contact-fields.util';
import type { Problem } from '../../common/shape/path.util';
import { ContentErrors } from '../content/content.errors';
import { mapViolations } from '../../common/errors/pg-error.util';
import { requireOrg, requireSite, targetOrg } from '../../common/tenant-access.util';
import { ImportPlan, phaseSizes, planFromContactsCsv, planFromInterchange, planFromValuesCsv } from './document/import-plan';
import { interchangeProblems } from './document/interchange.validator';
import type { InterchangeDocument } from './document/interchange.types';
import { IMPORT_BODY_DEPTH, IMPORT_BODY_LIMITS, IMPORT_JSON_MEDIA_TYPE } from './import-body.middleware';
import { bodyBoundsProblem } from '../../common/pipes/body-bounds';
import { emptyReport, REPORT_LISTS, zeroCounts } from './import-report';
import { zipPlan } from './import-plan.store';
import { ImportJob } from './import.job';
import { ImportErrors } from './import.errors';
import type { CreateImportQueryDto, ImportDto, ImportListDto, ImportMatchDto, ImportMatchListDto, ImportMatchResponseDto, ImportResponseDto, ListImportsQueryDto } from './import.dto';
import { ImportRepository, ImportRow, MatchRow } from './import.repository';
import type { ContactRecord } from '../content/contacts/contact-batch.repository';
import { ContactService } from '../content/contacts/contact.service';

export interface ImportUpload {
  /** The media type without parameters. */
  contentType: string;
  /** Parsed JSON (application/json) or text (CSV, the large-document media type). */
  body: unknown;
}

function toImportDto(r: ImportRow): ImportDto {
  const done = r.status === 'completed';
  const percent = done ? 100 : r.total_items === 0 ? 0 : Math.min(99, Math.floor((r.processed_items * 100) / r.total_items));
  const counts = r.report?.summary ?? zeroCounts();
  return {
    id: r.id,
    format: r.format,
    orgId: r.org_id,
    status: r.status,
    dryRun: r.dry_run,
    overwrite: r.overwrite,
    phase: r.current_phase,
    phases: r.phases.map((name) => {
      const p = r.report?.phases?.find((x) => x.name === name);
      return { name, status: p?.status ?? 'not_run', counts: p?.counts ?? zeroCounts(), durationMs: r.timings.find((t) => t.phase === name)?.ms ?? null };
    }),
    counts,
    processedItems: r.processed_items,
    totalItems: r.total_items,
    percent,
    pendingMatches: r.pending_matches ?? 0,
    error: r.error,
    createdAt: r.created_at.toISOString(),
    startedAt: r.started_at?.toISOString() ?? null,
    finishedAt: r.finished_at?.toISOString() ?? null,
  };
}

function toMatchDto(m: MatchRow): ImportMatchDto {
  return {
    id: m.id,
    importId: m.import_id,
    orgId: m.org_id,
    sourceRef: m.source_ref,
    externalId: m.external_id,
    source: m.source,
    candidateContactId: m.candidate_id,
    reason: m.reason,
    status: m.status,
    contactId: m.resolved_contact_id,
    resolvedAt: m.resolved_at?.toISOString() ?? null,
  };
}

/**
 * Imports from another RMM (spec 2.10): validates the upload at once (400 with the path of
 * every problem, up to 20), records the job and hands it to the ImportJob after the request commits;
 * reports progress; and applies acknowledgements of held-back contact matches.
 */
@Injectable()
export class ImportService implements OnApplicationBootstrap {
  constructor(
    private readonly repo: ImportRepository,
    private readonly contacts: ContactService,
    private readonly job: ImportJob,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Compiles the document's validator at start, before the instance listens, rather than in the
   * first import's request (which it would hold up for about a second) or just after listening
   * (where it held up the first requests of every other route for ~120 ms).
   */
  onApplicationBootstrap(): void {
    interchangeProblems({});
  }

  async create(principal: Principal, q: CreateImportQueryDto, upload: ImportUpload): Promise<ImportResponseDto> {
    const { plan, orgId } = this.plan(principal, q, upload);
    const sizes = phaseSizes(plan);
    const planGz = await zipPlan(plan);
    const row = await this.tx.run(scopeOf(principal), async () => {
      if (plan.format === 'interchange') await this.requireWholePartner(principal);
      const created = await this.repo.insert({
        partner_id: principal.partnerId as string,
        org_id: orgId,
        format: plan.format,
        dry_run: q.dryRun ?? false,
        overwrite: q.overwrite ?? false,
        phases: plan.phases,
        total_items: plan.phases.reduce((n, p) => n + sizes[p], 0),
        plan_gz: planGz,
        report: emptyReport(plan.phases, { dryRun: q.dryRun ?? false, overwrite: q.overwrite ?? false }),
        created_by: principal.userId,
        actor_type: principal.kind === 'api_key' ? 'api_key' : 'user',
        actor_id: principal.kind === 'api_key' ? principal.apiKeyId : principal.userId,
        scope: scopeOf(principal),
      });
      await this.audit.record({
        action: 'import.create',
        ...(orgId ? { orgId } : { partnerId: principal.partnerId }),
        resourceType: 'import',
        resourceId: created!.id,
        details: { format: plan.format, dryRun: q.dryRun ?? false, overwrite: q.overwrite ?? false, source: plan.source, totalItems: created!.total_items },
      });
      return created!;
    });
    this.job.kick(row.id, plan);
    return { success: true, import: { ...toImportDto(row), report: null } };
  }

  async list(q: ListImportsQueryDto): Promise<ImportListDto> {
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.list(limit, (page - 1) * limit);
    return { success: true, imports: rows.map(toImportDto), pagination: { page, limit, total } };
  }

  async get(id: string): Promise<ImportResponseDto> {
    const row = await this.repo.find(id);
    if (!row) throw ImportErrors.notFound();
    const finished = row.status === 'completed' || row.status === 'failed';
    if (!finished) return { success: true, import: { ...toImportDto(row), report: null } };
    // The job's report, then the items of each phase a real run committed, in phase order.
    const report = { ...row.report };
    for (const { items } of await this.repo.phaseItems(id)) {
      for (const k of REPORT_LISTS) if (items[k]?.length) report[k] = [...(report[k] ?? []), ...items[k]] as never;
    }
    return { success: true, import: { ...toImportDto(row), report } };
  }

  async matches(principal: Principal, id: string): Promise<ImportMatchListDto> {
    if (!(await this.repo.find(id))) throw ImportErrors.notFound();
    const rows = (await this.repo.matches(id)).filter((m) => !m.source.siteId || canAccessSite(principal, m.source.siteId));
    return { success: true, matches: rows.map(toMatchDto) };
  }

  async acknowledge(principal: Principal, id: string, matchId: string, action: 'merge' | 'create'): Promise<ImportMatchResponseDto> {
    if (!(await this.repo.find(id))) throw ImportErrors.notFound();
    const match = await this.repo.findMatch(id, matchId);
    if (!match) throw ImportErrors.matchNotFound();
    requireOrg(principal, match.org_id);
    requireSite(principal, match.source.siteId);
    if (match.status !== 'pending') throw ImportErrors.matchResolved(match.status);
    const src = canonicalContact(match.source as Parameters<typeof canonicalContact>[0]);
    let contact: ContactRecord;
    if (action === 'merge') {
      const candidate = match.candidate_id ? await this.contacts.record(match.org_id, match.candidate_id) : null;
      if (!candidate) throw ImportErrors.candidateGone();
      requireSite(principal, candidate.site_id);
      // The record fills in what it has; the existing contact keeps what the record lacks.
      contact = {
        ...candidate,
        name: src.name,
        email: src.email ?? candidate.email,
        phones: src.phones.length ? src.phones : candidate.phones,
        title: src.title ?? candidate.title,
        notes: src.notes ?? candidate.notes,
        site_id: src.siteId ?? candidate.site_id,
        external_id: match.external_id,
      };
      await mapViolations(() => this.contacts.upsertMany([], [contact]), { unique: ImportErrors.externalIdTaken });
    } else {
      contact = { id: randomUUID(), org_id: match.org_id, site_id: src.siteId, name: src.name, email: src.email, phones: src.phones, title: src.title, notes: src.notes, external_id: match.external_id };
      await mapViolations(() => this.contacts.upsertMany([contact], []), { unique: ImportErrors.externalIdTaken });
    }
    const resolved = await this.repo.resolveMatch(matchId, action === 'merge' ? 'merged' : 'created', contact.id, principal.userId);
    if (!resolved) throw ImportErrors.matchResolved('acknowledged');
    await this.audit.record({ action: 'import.match.acknowledge', orgId: match.org_id, resourceType: 'contact', resourceId: contact.id, details: { importId: id, matchId, action } });
    return { success: true, match: toMatchDto(resolved) };
  }

  private plan(principal: Principal, q: CreateImportQueryDto, upload: ImportUpload): { plan: ImportPlan; orgId: string | null } {
    const fail = (problems: Problem[]) => {
      throw ImportErrors.invalidDocument(problems);
    };
    if (upload.contentType === 'text/csv') {
      if (!q.type) throw ImportErrors.typeRequired();
      const orgId = targetOrg(principal, q.orgId);
      requireSite(principal, null);
      const text = typeof upload.body === 'string' ? upload.body : '';
      const { plan, problems } = q.type === 'contacts' ? planFromContactsCsv(text, orgId) : planFromValuesCsv(text, orgId);
      if (!plan) return fail(problems);
      return { plan, orgId };
    }
    if (upload.contentType !== 'application/json' && upload.contentType !== IMPORT_JSON_MEDIA_TYPE) throw ImportErrors.unsupportedMediaType();
    if (q.type) throw ImportErrors.typeNotForJson();
    if (q.orgId) throw ContentErrors.invalidField('orgId', 'orgId applies to CSV imports only; a document names its customers');
    if (principal.scope !== 'partner' || !principal.partnerId) throw ContentErrors.partnerScopeRequired('An interchange import');
    let doc: unknown;
    try {
      doc = JSON.parse(typeof upload.body === 'string' ? upload.body : '');
    } catch {
      throw ImportErrors.invalidJson();
    }
    const bounds = bodyBoundsProblem(doc, { depth: IMPORT_BODY_DEPTH, members: IMPORT_BODY_LIMITS[upload.contentType].members });
    if (bounds) throw ImportErrors.bodyBounds(bounds);
    const problems = interchangeProblems(doc);
    if (problems.length) return fail(problems);
    return { plan: planFromInterchange(doc as InterchangeDocument), orgId: null };
  }

  /** Customers map onto organizations by name as well as by link, so the importer must see them all. */
  private async requireWholePartner(principal: Principal): Promise<void> {
    if (principal.allowedSiteIds !== null) throw ImportErrors.fullAccessRequired();
    const all = await this.tx.withSystemContext('compare the partner\'s organizations with the importer\'s reach', () => this.repo.partnerOrgIds(principal.partnerId as string));
    if (all.some((o) => !principal.orgIds.includes(o.id))) throw ImportErrors.fullAccessRequired();
  }
}
