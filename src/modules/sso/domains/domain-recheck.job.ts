import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { JobsService } from '../../../infra/jobs/jobs.service';
import { SsoDomainService } from './sso-domain.service';

/** When verified domains are re-checked (every six hours, UTC), and how long a record may be missing before a domain loses its verification. */
export const DOMAIN_RECHECK_QUEUE = 'sso_domain_recheck';
export const DOMAIN_RECHECK_CRON = '17 */6 * * *';
export const DOMAIN_RECHECK_GRACE_HOURS = 72;

/**
 * Runs the domain re-check on a pg-boss schedule when background jobs are enabled
 * (START_JOBS): one run per tick across every instance. The re-check is idempotent and its
 * un-verification is a compare-and-swap, so a run retried after its instance died is harmless.
 */
@Injectable()
export class DomainRecheckJob implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(DomainRecheckJob.name);
  private running: Promise<void> | null = null;

  constructor(
    private readonly domains: SsoDomainService,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    void this.jobs.schedule(DOMAIN_RECHECK_QUEUE, DOMAIN_RECHECK_CRON, () => this.runOnce(), { expireInSeconds: 3600, retryLimit: 1 });
  }

  /** Resolves once the pass under way on this instance, if any, has ended. */
  async onModuleDestroy(): Promise<void> {
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
