import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { JobsService } from '../../infra/jobs/jobs.service';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';

export const WEBHOOK_RETENTION_QUEUE = 'webhook_retention';
/** Delivered and dead messages, and delivery-log rows, are kept this long (docs/operations.md, "Webhooks"). */
export const WEBHOOK_RETENTION_DAYS = 30;
const BATCH = 5000;

/** Once an hour, removes what the retention period has passed, a batch per transaction. */
@Injectable()
export class WebhookRetentionJob implements OnModuleInit {
  private readonly logger = new Logger(WebhookRetentionJob.name);

  constructor(
    private readonly repo: WebhookDeliveryRepository,
    private readonly tx: TenantTransactionService,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    void this.jobs.schedule(WEBHOOK_RETENTION_QUEUE, '23 * * * *', () => this.runOnce());
  }

  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.tx.withSystemContext('remove webhook messages and delivery-log rows past their retention, of every tenant', () => this.repo.prune(WEBHOOK_RETENTION_DAYS, BATCH));
      total += n;
      if (n < BATCH) break;
    }
    if (total) this.logger.log(`Removed ${total} webhook messages and delivery-log rows past ${WEBHOOK_RETENTION_DAYS} days`);
    return total;
  }
}
