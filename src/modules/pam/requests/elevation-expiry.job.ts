import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { JobsService } from '../../../infra/jobs/jobs.service';
import { AuditService } from '../../audit/audit.service';
import { ElevationRequestRepository } from './elevation-request.repository';

/** The pg-boss queue of the sweep: one run per EXPIRY_SWEEP_SECONDS across every instance. */
export const EXPIRY_SWEEP_QUEUE = 'pam_expiry_sweep';
export const EXPIRY_SWEEP_SECONDS = 15;
export const EXPIRY_SWEEP_BATCH = 500;

/**
 * Moves requests past their deadline (pending TTL, approval window) to expired. Correctness does
 * not depend on it: every state-changing statement carries the deadline in its predicate, and
 * reads show the effective status; the sweep makes the stored rows, events and audit trail catch
 * up, and takes back actuated elevations on the device. Each batch is one statement with SKIP
 * LOCKED (and one more for its audit rows), so two runs that overlap never expire a request twice. pg-boss starts one run per
 * 15-second slot across every instance (JobsService.every); tests call `runOnce` directly.
 */
@Injectable()
export class ElevationExpiryJob implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(ElevationExpiryJob.name);
  private running: Promise<number> | null = null;

  constructor(
    private readonly repo: ElevationRequestRepository,
    private readonly tx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly jobs: JobsService,
    private readonly audit: AuditService,
  ) {}

  onModuleInit(): void {
    void this.jobs.every(EXPIRY_SWEEP_QUEUE, EXPIRY_SWEEP_SECONDS, () => this.runOnce(), { expireInSeconds: 300 });
  }

  /** Resolves once the run under way on this instance, if any, has ended. */
  async onModuleDestroy(): Promise<void> {
    await this.running;
  }

  /** One sweep (batches until nothing is due); resolves to the number of requests expired. */
  runOnce(): Promise<number> {
    this.running ??= this.sweep()
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'Elevation expiry sweep failed');
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const expired = await this.tx.withSystemContext('expire elevation requests of every organization past their deadline', async () => {
        const rows = await this.repo.expireDue(this.config.pamPendingTtlMinutes, EXPIRY_SWEEP_BATCH);
        await this.audit.recordMany(
          rows.map((r) => ({ action: 'pam.elevation.expire', orgId: r.org_id, resourceType: 'elevation_request', resourceId: r.id, details: { fromStatus: r.from_status }, actor: { type: 'system', id: null } })),
        );
        return rows;
      });
      total += expired.length;
      if (expired.length < EXPIRY_SWEEP_BATCH) return total;
    }
  }
}
