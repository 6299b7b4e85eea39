import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { TenantTransaction } from '../../../infra/database/tenant-transaction.service';
import { ElevationRequestRepository } from './elevation-request.repository';

export const EXPIRY_SWEEP_INTERVAL_MS = 15_000;
export const EXPIRY_SWEEP_BATCH = 500;

/**
 * Moves requests past their deadline (pending TTL, approval window) to expired. Correctness does
 * not depend on it: every state-changing statement carries the deadline in its predicate, and
 * reads show the effective status; the sweep makes the stored rows, events and audit trail catch
 * up, and takes back actuated elevations on the device. Each batch is one statement with SKIP
 * LOCKED, so every instance may run it (see docs/pam-lifecycle.md for why this is a timer).
 */
@Injectable()
export class ElevationExpiryJob implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ElevationExpiryJob.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly repo: ElevationRequestRepository,
    private readonly tx: TenantTransaction,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.startJobs) return;
    this.timer = setInterval(() => void this.runOnce(), EXPIRY_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
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
      const expired = await this.tx.withSystemContext('expire elevation requests of every organization past their deadline', () =>
        this.repo.expireDue(this.config.pamPendingTtlMinutes, EXPIRY_SWEEP_BATCH),
      );
      total += expired.length;
      if (expired.length < EXPIRY_SWEEP_BATCH) return total;
    }
  }
}
