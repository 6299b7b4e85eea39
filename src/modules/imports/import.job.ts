import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { RequestContext } from '../../infra/context/request-context';
import { AppException } from '../../common/errors/app.exception';
import type { TenantScope } from '../../infra/database/tenant-scope';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { JobsService } from '../../infra/jobs/jobs.service';
import { AuditService } from '../audit/audit.service';
import { PrincipalResolverService } from '../auth/principal-resolver.service';
import { ImportPlan, PhaseName, phaseSizes } from './document/import-plan';
import { ImportLinkRepository } from './import-link.repository';
import { emptyReport, ImportReport, PhaseRecorder, REPORT_LISTS, withPhase } from './import-report';
import { ImportRepository, ImportRow } from './import.repository';
import { unzipPlan } from './import-plan.store';
import { ContactsPhase } from './phases/contacts.phase';
import { CustomFieldValuesPhase } from './phases/custom-field-values.phase';
import { CustomFieldsPhase } from './phases/custom-fields.phase';
import { DeviceGroupsPhase } from './phases/device-groups.phase';
import { DevicesPhase } from './phases/devices.phase';
import { OrganizationsPhase } from './phases/organizations.phase';
import type { ImportPhase, PhaseContext } from './phases/phase.types';
import { PoliciesPhase } from './phases/policies.phase';
import { ScriptsPhase } from './phases/scripts.phase';

/** A job whose heartbeat is older than this belongs to an instance that died; another takes it over. */
export const IMPORT_STALE_SECONDS = 120;
const HEARTBEAT_MS = 20_000;
/** pg-boss queues: one job per import run, and the sweep that resumes imports whose instance died. */
export const IMPORT_RUN_QUEUE = 'imports_run';
export const IMPORT_RESUME_QUEUE = 'imports_resume';
const RESUME_SECONDS = 30;
/**
 * A pg-boss run of an import counts as lost after this long (pg-boss then retries it on another
 * instance). The import's heartbeat notices a dead instance much sooner (IMPORT_STALE_SECONDS);
 * this is the backstop, longer than any import should take.
 */
const RUN_EXPIRE_SECONDS = 3600;
/** A job queued longer than this was never started (its instance died right after the request). */
const QUEUED_GRACE_SECONDS = 10;
const MAX_ATTEMPTS = 3;

class DryRunRollback extends Error {}

/**
 * Runs imports in the background. The state lives in the import row. The instance that took the
 * request runs the import itself once the request has committed; with START_JOBS, a sweep
 * (`imports_resume`, one run per 30 s across every instance) resumes a job whose instance died:
 * queued jobs never started, or running jobs whose heartbeat stopped. A real run commits each
 * phase in its own transaction (all or nothing per phase) together with the job's progress, so a
 * resumed job continues with the first phase not committed. A dry run runs the same phases in one transaction and
 * rolls it back, so it writes nothing and reports what the real run would.
 */
@Injectable()
export class ImportJob implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ImportJob.name);
  private readonly phases: Map<PhaseName, ImportPhase>;
  private readonly active = new Map<string, Promise<void>>();

  constructor(
    private readonly repo: ImportRepository,
    private readonly links: ImportLinkRepository,
    private readonly tx: TenantTransactionService,
    private readonly cls: RequestContext,
    private readonly audit: AuditService,
    private readonly jobs: JobsService,
    private readonly principals: PrincipalResolverService,
    organizations: OrganizationsPhase,
    customFields: CustomFieldsPhase,
    devices: DevicesPhase,
    contacts: ContactsPhase,
    values: CustomFieldValuesPhase,
    groups: DeviceGroupsPhase,
    scripts: ScriptsPhase,
    policies: PoliciesPhase,
  ) {
    this.phases = new Map([organizations, customFields, devices, contacts, values, groups, scripts, policies].map((p) => [p.name, p]));
  }

  onModuleInit(): void {
    // Imports start on the instance that accepted them (kick); this queue still runs the jobs an
    // instance of an earlier version queued during a rolling upgrade.
    void this.jobs.work<{ importId: string }>(IMPORT_RUN_QUEUE, ({ importId }) => this.process(importId), {
      expireInSeconds: RUN_EXPIRE_SECONDS,
      retryLimit: MAX_ATTEMPTS,
      retryDelaySeconds: 10,
      retryBackoff: true,
    });
    void this.jobs.every(IMPORT_RESUME_QUEUE, RESUME_SECONDS, () => this.resumeUnfinished(), { expireInSeconds: RUN_EXPIRE_SECONDS });
  }

  /** Resolves once the imports this instance is running have ended. */
  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled(this.active.values());
  }

  /**
   * Starts a committed import on this instance, once the current call stack (the request) is
   * done, with the plan the request already holds (a large export's plan is megabytes of JSON
   * that need not be read back). Every instance does so, with or without background jobs: a
   * pg-boss round trip cost seconds of queueing before a job started (issue 30), and the job row
   * keeps every import resumable anyway. Should this instance die first, the resume sweep of any
   * instance running jobs starts the import after QUEUED_GRACE_SECONDS.
   */
  kick(id: string, plan?: ImportPlan): void {
    setImmediate(() => void this.process(id, plan));
  }

  /** Runs a job if it can be claimed; resolves when it ends (at once if another holds it). */
  process(id: string, plan?: ImportPlan): Promise<void> {
    const running = this.active.get(id);
    if (running) return running;
    const job = this.run(id, plan)
      .catch((err: unknown) => this.logger.error({ err, importId: id }, 'Import job crashed'))
      .finally(() => this.active.delete(id));
    this.active.set(id, job);
    return job;
  }

  /** Takes over jobs whose instance died; returns how many it ran. */
  async resumeUnfinished(): Promise<number> {
    const ids = await this.system('find import jobs whose instance died', () => this.repo.unfinished(QUEUED_GRACE_SECONDS, IMPORT_STALE_SECONDS, 10));
    for (const { id } of ids) await this.process(id);
    return ids.length;
  }

  private async run(id: string, held?: ImportPlan): Promise<void> {
    const claimed = await this.system('claim an import job', () => this.repo.claim(id, IMPORT_STALE_SECONDS, !held));
    if (!claimed) return;
    const { pending, plan_gz, ...row } = claimed;
    const plan = held ?? (plan_gz ? unzipPlan(plan_gz) : (row.plan as ImportPlan));
    // Items of phases an earlier attempt of an earlier version committed (under report.pending):
    // they stay in the job's own report. Those of this version are in import_phase_items.
    let report = row.report;
    for (const phase of row.phases.slice(0, row.phases_completed)) {
      const items = pending?.[phase];
      if (items) report = { ...report, ...Object.fromEntries(REPORT_LISTS.map((k) => [k, [...(report[k] ?? []), ...(items[k] ?? [])]])) };
    }
    report = { ...emptyReport(row.phases, { dryRun: row.dry_run, overwrite: row.overwrite }), ...report };
    if (row.attempts > MAX_ATTEMPTS) {
      await this.end(row, 'failed', report, row.timings, { phase: row.current_phase, message: `gave up after ${MAX_ATTEMPTS} attempts` });
      return;
    }
    const heartbeat = setInterval(() => void this.system('import job heartbeat', () => this.repo.heartbeat(id)).catch(() => undefined), HEARTBEAT_MS);
    heartbeat.unref();
    try {
      if (row.dry_run) await this.runDry(row, plan);
      else await this.runReal(row, plan, report);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * One transaction per phase, and nothing else between phases: the phase's progress, audit row
   * and report items commit with it, and the same statement names the next phase.
   */
  private async runReal(row: ImportRow, plan: ImportPlan, report: ImportReport): Promise<void> {
    const sizes = phaseSizes(plan);
    // The job's own report keeps only the items it came with (an earlier version's); each phase's
    // items go to import_phase_items as it commits, and GET /imports/:id reads them from there.
    const carried = Object.fromEntries(REPORT_LISTS.map((k) => [k, report[k]])) as Pick<ImportReport, (typeof REPORT_LISTS)[number]>;
    let timings = row.timings;
    let processed = row.processed_items;
    let scope = await this.scopeOf(row, plan);
    let orgs: Map<string, string | null> | null = null;
    for (let i = row.phases_completed; i < row.phases.length; i++) {
      const phase = row.phases[i];
      const started = Date.now();
      let out: PhaseRecorder | null = null;
      try {
        await this.fresh(() =>
          this.tx.run(scope, async () => {
            await this.links.lockPartner(row.partner_id);
            orgs ??= phase === 'organizations' ? new Map() : await this.customerOrgs(row, plan);
            out = await this.runPhase(row, plan, phase, orgs);
            report = { ...withPhase(report, phase, out, 'completed'), ...carried };
            processed += sizes[phase];
            timings = [...timings, { phase, ms: Date.now() - started }];
            await this.audit.record({ action: 'import.phase', ...this.owner(row), actor: this.actor(row), resourceType: 'import', resourceId: row.id, details: { phase, counts: report.phases[i].counts } });
            // Progress commits with the phase, so a resumed job never repeats a committed phase.
            const items = { ...out.items, conflicts: out.conflicts };
            await this.tx.withSystemContext('record import progress in the phase transaction', () =>
              this.repo.progress(row.id, { phasesCompleted: i + 1, next: row.phases[i + 1] ?? null, processed, summary: report.summary, phases: report.phases, timings, phase, items }),
            );
          }),
        );
      } catch (err) {
        await this.end(row, 'failed', withPhase(report, phase, null, 'failed'), timings, { phase, message: this.describe(err, row.id) });
        return;
      }
      if (phase === 'organizations' && orgs) {
        const known = [...(orgs as Map<string, string | null>).values()].filter((x): x is string => !!x);
        scope = { ...scope, orgIds: [...new Set([...scope.orgIds, ...known])] };
        // The importer's cached principal predates the organizations just created: without this,
        // their next request (a list of organizations, another import) would not see them for
        // PRINCIPAL_CACHE_TTL_MS. Other instances see them within that time.
        if (row.created_by && (out as PhaseRecorder | null)?.items.created.some((x) => x.kind === 'organization')) this.principals.forgetUser(row.created_by);
      }
    }
    await this.end(row, 'completed', report, timings, null, processed);
  }

  private async runDry(row: ImportRow, plan: ImportPlan): Promise<void> {
    const sizes = phaseSizes(plan);
    let report = emptyReport(row.phases, { dryRun: true, overwrite: row.overwrite });
    let timings: ImportRow['timings'] = [];
    let processed = 0;
    let failure: ImportRow['error'] = null;
    const scope = await this.scopeOf(row, plan);
    try {
      await this.fresh(() =>
        this.tx.run(scope, async () => {
          await this.links.lockPartner(row.partner_id);
          const orgs = new Map<string, string | null>();
          for (const [i, phase] of row.phases.entries()) {
            const started = Date.now();
            try {
              const out = await this.runPhase(row, plan, phase, phase === 'organizations' || i > 0 ? orgs : await this.customerOrgs(row, plan));
              report = withPhase(report, phase, out, 'completed');
            } catch (err) {
              report = withPhase(report, phase, null, 'failed');
              failure = { phase, message: this.describe(err, row.id) };
              break;
            }
            processed += sizes[phase];
            timings = [...timings, { phase, ms: Date.now() - started }];
            const snapshot = { phasesCompleted: timings.length, next: row.phases[i + 1] ?? null, processed, summary: report.summary, phases: report.phases, timings, phase, items: null };
            await this.system('record dry-run progress outside the rolled-back transaction', () => this.repo.progress(row.id, snapshot));
          }
          throw new DryRunRollback();
        }),
      );
    } catch (err) {
      if (!(err instanceof DryRunRollback)) failure ??= { phase: null, message: this.describe(err, row.id) };
    }
    await this.end(row, failure ? 'failed' : 'completed', report, timings, failure, processed);
  }

  /** `orgs`: the organization of each planned customer, filled by the organizations phase and read by the others. */
  private async runPhase(row: ImportRow, plan: ImportPlan, phase: PhaseName, orgs: Map<string, string | null>): Promise<PhaseRecorder> {
    const out = new PhaseRecorder();
    const ctx: PhaseContext = {
      importId: row.id,
      partnerId: row.partner_id,
      source: plan.source,
      overwrite: row.overwrite,
      out,
      orgs,
      addOrgsToScope: async (orgIds) => {
        const current = this.tx.currentScope();
        await this.tx.rescope({ ...current, orgIds: [...current.orgIds, ...orgIds] });
      },
    };
    await (this.phases.get(phase) as ImportPhase).run(plan, ctx);
    return out;
  }

  /** Organization of each planned customer: the CSV target, or the one the organizations phase linked. */
  private async customerOrgs(row: ImportRow, plan: ImportPlan): Promise<Map<string, string | null>> {
    const links = plan.customers.some((c) => 'externalId' in c.target) ? new Map((await this.repo.customerLinks(row.partner_id, plan.source)).map((l) => [l.external_id, l.local_id])) : new Map<string, string>();
    return new Map(plan.customers.map((c) => [c.ref, 'orgId' in c.target ? c.target.orgId : (links.get(c.target.externalId) ?? null)]));
  }

  /**
   * The requester's scope, plus the organizations earlier phases of an interchange import
   * created or linked (the requester was checked to reach every organization of the partner).
   */
  private async scopeOf(row: ImportRow, plan: ImportPlan): Promise<TenantScope> {
    if (row.format !== 'interchange') return row.scope;
    const linked = await this.system('organizations an import created for the partner', () => this.repo.customerLinks(row.partner_id, plan.source));
    return { ...row.scope, orgIds: [...new Set([...row.scope.orgIds, ...linked.map((l) => l.local_id)])] };
  }

  private async end(row: ImportRow, status: 'completed' | 'failed', report: ImportReport, timings: ImportRow['timings'], error: ImportRow['error'], processed?: number): Promise<void> {
    await this.system('finish an import job', async () => {
      await this.repo.finish(row.id, { status, report, timings, error, processed });
      await this.audit.record({
        action: status === 'completed' ? 'import.complete' : 'import.fail',
        ...this.owner(row),
        actor: this.actor(row),
        resourceType: 'import',
        resourceId: row.id,
        details: { dryRun: row.dry_run, summary: report.summary, ...(error ? { error } : {}) },
      });
    });
  }

  private describe(err: unknown, importId: string): string {
    if (err instanceof AppException) return err.message;
    this.logger.error({ err, importId }, 'Import phase failed');
    return 'the phase failed unexpectedly and was rolled back; nothing of it was written';
  }

  private owner(row: ImportRow) {
    return row.org_id ? { orgId: row.org_id } : { partnerId: row.partner_id };
  }

  private actor(row: ImportRow) {
    return { type: row.actor_type, id: row.actor_id };
  }

  /** A new async context: its own transaction, never the request's or another phase's. */
  private fresh<T>(fn: () => Promise<T>): Promise<T> {
    return this.cls.run('fresh', fn);
  }

  private system<T>(reason: string, fn: () => Promise<T>): Promise<T> {
    return this.fresh(() => this.tx.withSystemContext(reason, fn));
  }
}
