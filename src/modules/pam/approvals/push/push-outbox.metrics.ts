import { Injectable, OnModuleInit } from '@nestjs/common';
import { TenantTransactionService } from '../../../../infra/database/tenant-transaction.service';
import { MetricsService } from '../../../../infra/metrics/metrics.service';
import { PushOutboxRepository } from './push-outbox.repository';

/** The push outbox's backlog as a gauge, counted at each scrape (docs/operations.md, "Metrics"). */
@Injectable()
export class PushOutboxMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: MetricsService,
    private readonly repo: PushOutboxRepository,
    private readonly tx: TenantTransactionService,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge('rmm_push_outbox_rows', 'Mobile approval pushes in the outbox: pending (waiting to be sent or retried) and failed (out of attempts)', ['status'], async () => {
      const { pending, failed } = await this.tx.withSystemLookup('the metrics scrape counts the push outbox of every organization (numbers only)', () => this.repo.backlog());
      return [
        { labels: { status: 'pending' }, value: pending },
        { labels: { status: 'failed' }, value: failed },
      ];
    });
  }
}
