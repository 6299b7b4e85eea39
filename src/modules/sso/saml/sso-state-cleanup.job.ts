import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { JobsService } from '../../../infra/jobs/jobs.service';
import { LoginSessionService } from '../sign-in/login-session.service';
import { SsoSessionLinkService } from '../login/sso-session-link.service';
import { SamlRepository } from './saml.repository';

export const SSO_CLEANUP_QUEUE = 'sso_state_cleanup';
/** Every minute (UTC), across every instance. */
export const SSO_CLEANUP_CRON = '* * * * *';

/**
 * Removes expired sign-in state: OIDC and SAML login sessions, exchange codes, the sign-out links
 * of expired sessions, unanswered SAML requests and consumed SAML assertions past their window.
 * Each statement deletes a bounded batch. Sign-ins themselves no longer prune login sessions,
 * exchange codes or links as they write (each such DELETE was a round trip on every sign-in,
 * issue 19): this job is what keeps those tables small. Nothing depends on it for correctness:
 * every read of a login session or exchange code checks `expires_at`, and a link is only read
 * for a session that is still live.
 */
@Injectable()
export class SsoStateCleanupJob implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SsoStateCleanupJob.name);
  private running: Promise<void> | null = null;

  constructor(
    private readonly loginSessions: LoginSessionService,
    private readonly saml: SamlRepository,
    private readonly sessionLinks: SsoSessionLinkService,
    private readonly tx: TenantTransactionService,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    void this.jobs.schedule(SSO_CLEANUP_QUEUE, SSO_CLEANUP_CRON, () => this.runOnce(), { expireInSeconds: 300 });
  }

  /** Resolves once the run under way on this instance, if any, has ended. */
  async onModuleDestroy(): Promise<void> {
    await this.running;
  }

  /** One pass over the five tables, unless one is still running in this process. */
  runOnce(): Promise<void> {
    this.running ??= this.tx
      .withSystemContext('remove expired sign-in state of every tenant', async () => {
        await this.loginSessions.sweepExpired();
        await this.sessionLinks.sweepExpiredLinks();
        await this.saml.sweepExpiredRequests();
        await this.saml.sweepConsumedAssertions();
      })
      .catch((error: unknown) => this.logger.error({ err: error }, 'Sign-in state clean-up failed'))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
