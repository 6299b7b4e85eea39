import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { SsoDomainService } from './sso-domain.service';

/** How often verified domains are re-checked, and how long a record may be missing before a domain loses its verification. */
export const DOMAIN_RECHECK_INTERVAL_MS = 6 * 60 * 60 * 1000;
export const DOMAIN_RECHECK_GRACE_HOURS = 72;

/**
 * Runs the domain re-check on a timer when background jobs are enabled (START_JOBS). The
 * re-check is idempotent and its un-verification is a compare-and-swap, so every instance
 * may run it; docs/sso-admin.md explains why this is a timer rather than a pg-boss schedule.
 */
@Injectable()
export class DomainRecheckJob implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DomainRecheckJob.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly domains: SsoDomainService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.startJobs) return;
    this.timer = setInterval(() => this.runOnce(), DOMAIN_RECHECK_INTERVAL_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass, unless one is still running in this process. */
  runOnce(): Promise<void> {
    this.running ??= this.domains
      .recheckAll(DOMAIN_RECHECK_GRACE_HOURS)
      .then((report) => this.logger.log(report, 'Domain re-check finished'))
      .catch((error: unknown) => this.logger.error({ err: error }, 'Domain re-check failed'))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
