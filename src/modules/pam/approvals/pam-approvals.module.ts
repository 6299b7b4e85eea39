import { Module } from '@nestjs/common';
import { JobsModule } from '../../../infra/jobs/jobs.module';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { PamRequestsModule } from '../requests/pam-requests.module';
import { ApprovalFanoutService } from './approval-fanout.service';
import { ApprovalController } from './approval.controller';
import { ApprovalRepository } from './approval.repository';
import { ApprovalService } from './approval.service';
import { MobileDeviceRepository } from './mobile-device.repository';
import { MobileDeviceService } from './mobile-device.service';
import { HttpPushGateway } from './push/http-push.gateway';
import { LoggingPushGateway } from './push/logging-push.gateway';
import { PushGateway } from './push/push-gateway';
import { PushOutboxMetrics } from './push/push-outbox.metrics';
import { PushOutboxRepository } from './push/push-outbox.repository';
import { PushOutboxWorker } from './push/push-outbox.worker';

/**
 * Mobile approvals: technicians' phones, the fan-out of approval requests for pending elevation
 * requests (exported for agent ingest and the JIT and tool-action flows), the decide route and
 * push delivery from the outbox.
 */
@Module({
  imports: [PamRequestsModule, JobsModule],
  controllers: [ApprovalController],
  providers: [
    ApprovalFanoutService,
    ApprovalRepository,
    ApprovalService,
    MobileDeviceRepository,
    MobileDeviceService,
    PushOutboxMetrics,
    PushOutboxRepository,
    PushOutboxWorker,
    {
      provide: PushGateway,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): PushGateway => (config.pushGatewayUrl ? new HttpPushGateway(config.pushGatewayUrl) : new LoggingPushGateway()),
    },
  ],
  exports: [ApprovalFanoutService],
})
export class PamApprovalsModule {}
