import { Module } from '@nestjs/common';
import { JobsModule } from '../../infra/jobs/jobs.module';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhookDeliveryWorker } from './webhook-delivery.worker';
import { WebhookHttpService } from './webhook-http.service';
import { WebhookRetentionJob } from './webhook-retention.job';
import { WebhookSubscriptionController } from './webhook-subscription.controller';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';
import { WebhookSubscriptionService } from './webhook-subscription.service';

/**
 * Outbound, signed webhooks (issue 29, item 3): subscriptions, the outbox the database fills in the
 * transaction of each change (migration 1763702800000), and its delivery. Imports nothing of the
 * modules whose changes it reports: the audit trail is the one place every event passes.
 */
@Module({
  imports: [JobsModule],
  controllers: [WebhookSubscriptionController],
  providers: [WebhookSubscriptionService, WebhookSubscriptionRepository, WebhookDeliveryRepository, WebhookDeliveryWorker, WebhookRetentionJob, WebhookHttpService],
  exports: [WebhookDeliveryWorker, WebhookRetentionJob],
})
export class WebhooksModule {}
